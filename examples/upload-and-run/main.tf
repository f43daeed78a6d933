# Upload an image, run a workflow on it through the v1 interface, and list the files it made.
#
#   terraform apply -var image=./photo.png

terraform {
  required_providers {
    svc = {
      source = "svc-org/svc"
    }
  }
}

variable "image" {
  description = "Path of a PNG or JPEG to process."
  type        = string
}

variable "flip_method" {
  description = "How to flip the image: \"x-axis: vertically\" or \"y-axis: horizontally\"."
  type        = string
  default     = "x-axis: vertically"
}

variable "endpoint" {
  description = "Workflow service URL; null uses SVC_ENDPOINT. The API key comes from SVC_API_KEY."
  type        = string
  default     = null
}

provider "svc" {
  endpoint = var.endpoint
}

# Editing the file changes source_sha256 at plan time, which uploads it again.
resource "svc_upload" "input" {
  source    = var.image
  overwrite = true
}

resource "svc_prompt" "flip" {
  # Checked at plan time against GET /api/object_info (validate defaults to true):
  # unknown node classes and missing required inputs fail the plan, before anything is sent.
  workflow = jsonencode({
    "1" = { class_type = "LoadImage", inputs = { image = svc_upload.input.name } }
    "2" = { class_type = "ImageFlip", inputs = { image = ["1", 0], flip_method = var.flip_method } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "flipped" } }
  })

  # With overwrite the uploaded name stays the same, so rerun explicitly when the image changes.
  lifecycle {
    replace_triggered_by = [svc_upload.input.source_sha256]
  }
}

# The flipped image, fetched through GET /api/view (the redirect to storage carries no key).
resource "svc_output_file" "flipped" {
  view = {
    filename  = svc_prompt.flip.outputs[0].filename
    subfolder = svc_prompt.flip.outputs[0].subfolder
    type      = svc_prompt.flip.outputs[0].type
  }
  path = "${abspath(path.module)}/out/flipped.png"
}

output "status" {
  value = svc_prompt.flip.status
}

# Each output names a file for GET /api/view (filename, subfolder, type).
output "files" {
  value = [for o in svc_prompt.flip.outputs : { node = o.node_id, file = o.filename, type = o.type, kind = o.kind }]
}
