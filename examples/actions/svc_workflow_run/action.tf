# Run a workflow once and save its outputs in ./out, reporting its progress as it goes.
# Every invocation is a new, billed run: `terraform apply -auto-approve -invoke=action.svc_workflow_run.preview`.
# (Use the svc_job resource instead when the outputs belong in state or other resources use them.)
action "svc_workflow_run" "preview" {
  config {
    workflow = jsonencode({
      "1" = { class_type = "EmptyImage", inputs = { width = 256, height = 256, batch_size = 2, color = 2003199 } }
      "2" = { class_type = "ImageNoiseSampler", inputs = { image = ["1", 0], seed = var.seed, steps = 8, denoise = 0.6 } }
      "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "preview" } }
    })
    output_dir = "${abspath(path.module)}/out"

    timeouts = {
      invoke = "20m"
    }
  }
}

variable "seed" {
  type    = number
  default = 7
}

# The same run, triggered by Terraform: after this resource is created, and each time an apply
# changes the seed.
resource "terraform_data" "seed" {
  input = var.seed

  lifecycle {
    action_trigger {
      events  = [after_create, after_update]
      actions = [action.svc_workflow_run.preview]
    }
  }
}
