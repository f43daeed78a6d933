# The provider for the svc_workflow_run example (action.tf). Actions need Terraform 1.14 or newer.
#
#   terraform apply -auto-approve -invoke=action.svc_workflow_run.preview   # one run, on request
#   terraform apply -var seed=8                                             # a run each time the seed changes

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
