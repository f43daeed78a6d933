# Chain two jobs: the second inverts the first job's image, referenced as an asset.
resource "svc_job" "base" {
  workflow = jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 512, height = 512, batch_size = 1, color = 3355443 } }
    "2" = { class_type = "SaveImage", inputs = { images = ["1", 0], filename_prefix = "base" } }
  })
}

resource "svc_job" "inverted" {
  workflow = jsonencode({
    "1" = { class_type = "LoadImage", inputs = { image = provider::svc::asset_ref(svc_job.base.outputs[0].id) } }
    "2" = { class_type = "ImageInvert", inputs = { image = ["1", 0] } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "inverted" } }
  })
}
