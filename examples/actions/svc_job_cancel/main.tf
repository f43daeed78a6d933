# The provider for the svc_job_cancel example (action.tf). Actions need Terraform 1.14 or newer.
#
#   terraform apply -auto-approve -invoke=action.svc_job_cancel.stop -var job_id=<id>   # on request
#   terraform apply -var job_id=<id>                                                    # when the id is recorded or changes

terraform {
  required_version = ">= 1.14"
  required_providers {
    svc = {
      source = "svc-org/svc"
    }
  }
}

variable "endpoint" {
  description = "Workflow service URL; null uses SVC_ENDPOINT."
  type        = string
  default     = null
}

provider "svc" {
  endpoint = var.endpoint
}
