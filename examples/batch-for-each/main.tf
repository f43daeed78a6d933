# A small batch as one svc_job per row (for_each over prompts.csv, 5 rows), every image downloaded
# with svc_output_file. Each job saves its prompt as text beside the image.
#
# Use this shape for a few rows that other resources use one by one. Past a hundred rows, use
# svc_job_batch (examples/batch): Terraform's cost per resource grows with the square of their
# number, and every svc_job stores its own copy of the workflow.

terraform {
  required_version = ">= 1.11"
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

locals {
  rows = { for row in csvdecode(file("${path.module}/prompts.csv")) : row.name => row }
}

resource "svc_job" "item" {
  for_each = local.rows

  workflow = jsonencode({
    "1" = { class_type = "PrimitiveString", inputs = { value = each.value.prompt } }
    "2" = { class_type = "SaveText", inputs = { text = ["1", 0], filename_prefix = each.key } }
    "3" = { class_type = "EmptyImage", inputs = { width = 64, height = 64, batch_size = 1, color = tonumber(each.value.color) } }
    "4" = { class_type = "ImageNoiseSampler", inputs = { image = ["3", 0], seed = tonumber(each.value.seed), steps = 4, denoise = 0.5 } }
    "5" = { class_type = "SaveImage", inputs = { images = ["4", 0], filename_prefix = each.key } }
  })
}

resource "svc_output_file" "image" {
  for_each = svc_job.item

  # Outputs are listed in the order the service committed them; pick the image by type.
  asset_id      = one([for o in each.value.outputs : o.id if o.type == "image"])
  expected_hash = one([for o in each.value.outputs : o.hash if o.type == "image"])
  path          = "${abspath(path.module)}/out/${each.key}.png"
}

output "images" {
  value = length(svc_output_file.image)
}
