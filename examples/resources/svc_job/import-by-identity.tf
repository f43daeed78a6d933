# Adopt a job by its id. The job record does not carry the workflow: the first apply takes it
# from configuration in place, submitting nothing and running nothing again.
import {
  to = svc_job.portrait
  identity = {
    id = "5d2f3c1e-8a4b-4c6d-9e0f-1a2b3c4d5e6f"
  }
}
