# A job is imported by its id (a UUID). The job record does not carry the workflow, so the
# first plan after import records the configured workflow in state in place; nothing is sent.
terraform import svc_job.portrait 1b4e28ba-2fa1-41d2-883f-0016d3cca427
