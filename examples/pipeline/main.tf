# A three-stage pipeline: each stage consumes the previous stage's outputs as asset
# references, for every colour of a palette. Files land in ./out/<name>.png.

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

variable "palette" {
  description = "Name to 0xRRGGBB colour: one pipeline run each."
  type        = map(number)
  default = {
    ocean  = 1981066
    ember  = 14826520
    meadow = 4565066
  }
}

provider "svc" {
  endpoint = var.endpoint
}

# Stage 1: a canvas per colour.
resource "svc_job" "canvas" {
  for_each = var.palette

  workflow = jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 128, height = 128, batch_size = 1, color = each.value } }
    "2" = { class_type = "SaveImage", inputs = { images = ["1", 0], filename_prefix = "canvas-${each.key}" } }
  })
}

# Stage 2: texture the canvas. The input is the stage-1 output, passed as an asset reference.
resource "svc_job" "texture" {
  for_each = svc_job.canvas

  workflow = jsonencode({
    "1" = { class_type = "LoadImage", inputs = { image = provider::svc::asset_ref(each.value.outputs[0].id) } }
    "2" = { class_type = "ImageNoiseSampler", inputs = { image = ["1", 0], seed = 7, steps = 6, denoise = 0.4 } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "texture-${each.key}" } }
  })
}

# Stage 3: invert and soften the texture.
resource "svc_job" "final" {
  for_each = svc_job.texture

  workflow = jsonencode({
    "1" = { class_type = "LoadImage", inputs = { image = provider::svc::asset_ref(each.value.outputs[0].id) } }
    "2" = { class_type = "ImageInvert", inputs = { image = ["1", 0] } }
    "3" = { class_type = "ImageBlur", inputs = { image = ["2", 0], blur_radius = 2, sigma = 1.0 } }
    "4" = { class_type = "SaveImage", inputs = { images = ["3", 0], filename_prefix = "final-${each.key}" } }
  })
}

resource "svc_output_file" "final" {
  for_each = svc_job.final

  asset_id      = each.value.outputs[0].id
  expected_hash = each.value.outputs[0].hash
  path          = "${abspath(path.module)}/out/${each.key}.png"
}

output "files" {
  value = { for k, f in svc_output_file.final : k => f.id }
}

output "lineage" {
  description = "For each colour, the job ids of the three stages."
  value = {
    for k in keys(var.palette) : k => [svc_job.canvas[k].id, svc_job.texture[k].id, svc_job.final[k].id]
  }
}
