# Cancel a job by its id (one an interrupted svc_workflow_run printed, or svc_job.<name>.id) and
# wait until it has stopped: `terraform apply -auto-approve -invoke=action.svc_job_cancel.stop -var job_id=<id>`.
action "svc_job_cancel" "stop" {
  config {
    id   = var.job_id
    wait = true
  }
}

variable "job_id" {
  description = "Id of the job to cancel."
  type        = string
}

# The same cancel, triggered by Terraform: recording a job id here cancels that job, once, when
# it is recorded and whenever it changes.
resource "terraform_data" "job_to_stop" {
  input = var.job_id

  lifecycle {
    action_trigger {
      events  = [after_create, after_update]
      actions = [action.svc_job_cancel.stop]
    }
  }
}
