# Run an API-format workflow as a durable job and wait for its outputs.
resource "svc_job" "portrait" {
  workflow = jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 512, height = 512, batch_size = 1, color = 0 } }
    "2" = { class_type = "ImageNoiseSampler", inputs = { image = ["1", 0], seed = 7, steps = 20, denoise = 1.0 } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "portrait" } }
  })

  # Partner nodes take their credential from a write-only attribute: it never reaches state.
  partner_api_key_wo = var.partner_api_key

  timeouts = {
    create = "30m"
    delete = "5m"
  }
}

variable "partner_api_key" {
  type      = string
  sensitive = true
  ephemeral = true
  default   = null
}

# Workflows exported from the editor live well in files.
resource "svc_job" "from_file" {
  workflow            = file("${path.module}/workflow_api.json")
  wait_for_completion = false # apply returns once queued; refresh fills status and outputs
}

output "first_image_asset_id" {
  # An output is an asset: download it by id (svc_output_file.asset_id); state keeps no signed URL.
  value = svc_job.portrait.outputs[0].id
}
