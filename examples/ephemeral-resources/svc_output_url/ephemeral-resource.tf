resource "svc_job" "render" {
  workflow = jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 64, height = 64, batch_size = 1, color = 0 } }
    "2" = { class_type = "SaveImage", inputs = { images = ["1", 0], filename_prefix = "render" } }
  })
}

# A freshly signed URL of the job's first output, asked for each time it is used and never
# written to the plan or the state (Terraform 1.10+, OpenTofu 1.11+).
ephemeral "svc_output_url" "render" {
  asset_id = svc_job.render.outputs[0].id
}

# Hand it to a tool at once: here a provisioner copies the output to another store. The URL
# carries its own authorization and expires soon, so it is fetched without the API key.
resource "terraform_data" "publish" {
  triggers_replace = [svc_job.render.outputs[0].id]

  provisioner "local-exec" {
    command = "curl -fsS -o \"$DEST\" \"$URL\""
    environment = {
      URL  = ephemeral.svc_output_url.render.url
      DEST = "${abspath(path.module)}/out/render.png"
    }
  }
}
