# Download every output of a batch of jobs.
#
# `for_each = svc_job.x.outputs` (or `count = length(svc_job.x.outputs)`) fails at plan with
# "The for_each value depends on resource attributes that cannot be determined until apply":
# a job's outputs exist only once it has run. Key the downloads on what is known at plan
# time instead: here, the jobs' names and how many images each job makes (its batch_size).
# A precondition says so plainly if a job ever returns another number of images.

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

variable "images_per_job" {
  description = "How many images each job makes: the batch_size of its EmptyImage node."
  type        = number
  default     = 3
}

provider "svc" {
  endpoint = var.endpoint
}

locals {
  # Job name to colour.
  jobs = { red = 14423100, green = 3329330, blue = 4286945 }

  # One entry per image of every job, keyed "<job>-<index>": every key is known at plan time.
  files = {
    for pair in setproduct(keys(local.jobs), range(var.images_per_job)) :
    "${pair[0]}-${pair[1]}" => { job = pair[0], index = pair[1] }
  }
}

resource "svc_job" "tiles" {
  for_each = local.jobs

  workflow = jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 64, height = 64, batch_size = var.images_per_job, color = each.value } }
    "2" = { class_type = "ImageNoiseSampler", inputs = { image = ["1", 0], seed = 7, steps = 4, denoise = 0.5 } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = each.key } }
  })
}

resource "svc_output_file" "tile" {
  for_each = local.files

  asset_id      = svc_job.tiles[each.value.job].outputs[each.value.index].id
  expected_hash = svc_job.tiles[each.value.job].outputs[each.value.index].hash
  path          = "${abspath(path.module)}/out/${each.key}.png"

  lifecycle {
    precondition {
      condition     = length(svc_job.tiles[each.value.job].outputs) == var.images_per_job
      error_message = "Job ${each.value.job} returned ${length(svc_job.tiles[each.value.job].outputs)} outputs, not images_per_job (${var.images_per_job}): set images_per_job to what the workflow makes."
    }
  }
}

output "files" {
  description = "Every file written, by job and index."
  value       = sort(keys(svc_output_file.tile))
}
