package provider

// defaultValidate is the one default of every plan-time check of what will be submitted
// (svc_job.validate, svc_prompt.validate, svc_router_request.validate_input). The checks are
// on by default: they send nothing billable, read the service's own description (node classes,
// input schema) once per run, never refuse what the service would accept (values are not
// judged, only unknown classes, missing inputs and schema violations), and turn a failed,
// billed submission into a plan error with every problem listed. Where the service cannot
// describe itself the check is skipped with a warning, so turning it off is only needed to
// submit something the check wrongly rejects.
const defaultValidate = true

// validateDefaultDoc ends each check's description with the shared default and its reason.
const validateDefaultDoc = "Default `true`, as for every plan-time check in this provider: the check sends nothing " +
	"billable and never refuses what the service would accept, and a mistake found at plan time costs nothing, " +
	"while found on submission it can cost a run."
