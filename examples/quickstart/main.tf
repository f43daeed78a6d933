# Quickstart: generate a batch of images with one workflow job and write them to ./out/.
#
# The endpoint defaults to SVC_ENDPOINT (make demo points it at the local reference server);
# the API key, if the service needs one, comes from SVC_API_KEY.

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

variable "batch_size" {
  description = "How many images the job generates."
  type        = number
  default     = 3
}

# An API-format workflow: an empty image, noised over a few sampler steps, inverted, saved.
resource "svc_job" "images" {
  workflow = jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 256, height = 256, batch_size = var.batch_size, color = 2003199 } }
    "2" = { class_type = "ImageNoiseSampler", inputs = { image = ["1", 0], seed = 42, steps = 12, denoise = 0.6 } }
    "3" = { class_type = "ImageInvert", inputs = { image = ["2", 0] } }
    "4" = { class_type = "SaveImage", inputs = { images = ["3", 0], filename_prefix = "quickstart" } }
  })

  timeouts = {
    create = "10m"
  }
}

# One file per image, fetched by asset id (so it works after the signed URLs expire) and
# checked against the service's blake3 hash while it streams.
resource "svc_output_file" "image" {
  count = var.batch_size

  asset_id      = svc_job.images.outputs[count.index].id
  expected_hash = svc_job.images.outputs[count.index].hash
  path          = "${abspath(path.module)}/out/${svc_job.images.outputs[count.index].name}"
}

output "job_id" {
  value = svc_job.images.id
}

output "job" {
  value = {
    status       = svc_job.images.status
    completed_at = svc_job.images.completed_at
    expires_at   = svc_job.images.expires_at
  }
}

output "files" {
  description = "The PNG files written, with their hashes."
  value = {
    for f in svc_output_file.image : f.id => { bytes = f.size_bytes, blake3 = f.blake3 }
  }
}
