package provider

// The defaults that decide what runs, how long it is waited for and what is billed, stated on
// each resource's page (its description and its timeouts), with what happens when a limit runs
// out. The values are the ones the code uses: defaultJobCreateTimeout and the like.

const (
	jobCreateTimeoutDoc = "Longest the apply waits for the job to end, the submission and its retries included " +
		"(default `30m`; a wait resumed by a later apply gets as long again). When it runs out, the apply fails and the " +
		"job, still running on the service, is kept in state **tainted**, so nothing that uses its outputs goes on: " +
		"`terraform untaint <address>` then `terraform apply` waits for the same job; left tainted, the next apply " +
		"cancels it and submits it again, which runs and bills it again. Raise it for long jobs."
	jobDeleteTimeoutDoc = "Longest a destroy waits for a job it cancelled to stop (default `10m`; only with " +
		"`cancel_on_destroy = true` and a job not finished). When it runs out, the destroy fails and the job stays in " +
		"state; the next destroy asks again."
	routerCreateTimeoutDoc = "Longest the apply waits for the model's result, the call and its retries included (default " +
		"`30m`). When it runs out, the apply fails and the request, which goes on on the router, is kept in state " +
		"**tainted**: `terraform untaint <address>` then `terraform apply` waits for the same request; left tainted, the " +
		"next apply cancels it and calls the model again, which is billed again."
	routerDeleteTimeoutDoc = "Longest a destroy waits for the router to answer the cancel of a request not `COMPLETED` " +
		"(default `5m`). When it runs out, the destroy fails and the request stays in state."
	promptCreateTimeoutDoc = "Longest the apply follows the prompt, the submission included (default `30m`). When it " +
		"runs out, the apply fails and the prompt, which keeps running on the service, is kept in state **tainted**: " +
		"`terraform untaint <address>` then `terraform apply` follows the same prompt; left tainted, the next apply " +
		"forgets it (the v1 interface cannot cancel) and submits the workflow again, which runs, and bills, it again."

	jobDefaultsDoc = "\n\n**Defaults that decide what runs and what is billed** (see each one): " +
		"`wait_for_completion = true` (the apply waits for the job to end), `timeouts.create = \"30m\"` (then the job is " +
		"tainted, and left so, run again by the next apply), `cancel_on_destroy = true` (destroying a job not finished " +
		"cancels it; `timeouts.delete = \"10m\"`), `rerun_on_expiry = false` (a job the service expired is kept, not run " +
		"again), `validate = true` (the workflow is checked at plan time, nothing sent when it fails). " + retriesDoc
	routerDefaultsDoc = "\n\n**Defaults that decide what runs and what is billed** (each argument below says more): " +
		"`mode = \"queued\"`, `wait_for_completion = true` (the apply waits for the result), `timeouts.create = \"30m\"` " +
		"(then the request is tainted, and left so, called again by the next apply), `timeouts.delete = \"5m\"` " +
		"(destroying a request not `COMPLETED` asks the router to cancel it), `validate = true` (the input is checked " +
		"at plan time against an authored schema). " + retriesDoc
	promptDefaultsDoc = "\n\n**Defaults that decide what runs and what is billed** (each argument below says more): " +
		"`wait_for_completion = true` (the apply follows the prompt to its end), `timeouts.create = \"30m\"` (then the " +
		"prompt is tainted, and left so, submitted again by the next apply), `validate = true` (the workflow is checked " +
		"at plan time). Destroying never cancels: the v1 interface has no cancel route. " + retriesDoc
	retriesDoc = "Transient failures of a read are retried `max_retries` times (a provider setting, default 5), " +
		"then the operation fails with the last error; a submission is resent only when it provably did not run, and " +
		"one whose outcome is unknown is reported (with its key, where it has one), never resent."
)

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
