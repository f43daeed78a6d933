# Runs a workflow through the v1 interface and collects its outputs from the socket.
# v1 has no idempotency key: when a submission's outcome is unknown the provider reports it
# and does not resubmit.
resource "svc_prompt" "flip" {
  workflow = jsonencode({
    "1" = { class_type = "LoadImage", inputs = { image = "photo.png" } }
    "2" = { class_type = "ImageFlip", inputs = { image = ["1", 0], flip_method = "x-axis: vertically" } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "flipped" } }
  })

  timeouts = {
    create = "15m"
  }
}

output "files" {
  value = [for o in svc_prompt.flip.outputs : o.filename]
}
