locals {
  tiles = 2 # the batch_size below: how many images the job makes
}

resource "svc_job" "images" {
  workflow = jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 64, height = 64, batch_size = local.tiles, color = 0 } }
    "2" = { class_type = "SaveImage", inputs = { images = ["1", 0], filename_prefix = "tile" } }
  })
}

# Download each output, verifying the service's hash while streaming.
#
# count (or for_each) must be known at plan time, and a job's outputs are known only after it
# has run: `for_each = svc_job.images.outputs` fails with "cannot be determined until apply".
# Count what the workflow makes instead (local.tiles); for every output of a batch of jobs,
# key on the job names and the index (see the repository's examples/every-output).
resource "svc_output_file" "tile" {
  count = local.tiles

  asset_id      = svc_job.images.outputs[count.index].id
  expected_hash = svc_job.images.outputs[count.index].hash
  path          = "${abspath(path.module)}/out/tile-${count.index}.png"

  # Give up when storage sends nothing for 2 minutes, or after 10 minutes in all.
  stall_timeout = "2m"
  timeouts = {
    create = "10m"
  }
}
