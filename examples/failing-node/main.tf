# What a failed job looks like: the workflow is valid, so the service accepts it and starts it,
# but its last node (RaiseError, a node class of the local reference server) fails at run time.
# `terraform apply` then ends with an error naming the node, its message and the last lines of
# the service's traceback; the job id stays in state, tainted, so the next apply submits the
# workflow again.

terraform {
  required_version = ">= 1.11"
  required_providers {
    svc = {
      source = "svc-org/svc"
    }
  }
}

variable "endpoint" {
  description = "Workflow service URL; null uses SVC_ENDPOINT (else http://127.0.0.1:8188)."
  type        = string
  default     = null
}

variable "message" {
  description = "What the failing node raises."
  type        = string
  default     = "CUDA out of memory (simulated)"
}

provider "svc" {
  endpoint = var.endpoint
}

resource "svc_job" "fails" {
  workflow = jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 64, height = 64, batch_size = 1, color = 0 } }
    "2" = { class_type = "ImageInvert", inputs = { image = ["1", 0] } }
    "3" = { class_type = "RaiseError", inputs = { image = ["2", 0], message = var.message } }
  })
}

output "job_id" {
  value = svc_job.fails.id
}
