resource "svc_job" "images" {
  workflow = jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 64, height = 64, batch_size = 2, color = 0 } }
    "2" = { class_type = "SaveImage", inputs = { images = ["1", 0], filename_prefix = "tile" } }
  })
}

# Download each output, verifying the service's hash while streaming.
resource "svc_output_file" "tile" {
  count = 2

  asset_id      = svc_job.images.outputs[count.index].id
  expected_hash = svc_job.images.outputs[count.index].hash
  path          = "${abspath(path.module)}/out/tile-${count.index}.png"

  # Give up when storage sends nothing for 2 minutes, or after 10 minutes in all.
  stall_timeout = "2m"
  timeouts = {
    create = "10m"
  }
}
