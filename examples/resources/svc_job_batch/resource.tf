# One resource, one job per row: each row is the template with its overrides applied.
locals {
  # Rows usually come from a file: csvdecode(file("${path.module}/products.csv")).
  products = csvdecode(<<-CSV
    sku,prompt,seed
    sku-001,a red kettle on white,11
    sku-002,a blue teapot on white,12
    sku-003,a green mug on white,13
  CSV
  )
}

resource "svc_job_batch" "products" {
  # The template, stored once: each row overrides some of its inputs.
  workflow = jsonencode({
    "1" = { class_type = "PrimitiveString", inputs = { value = "a prompt" } }
    "2" = { class_type = "SaveText", inputs = { text = ["1", 0], filename_prefix = "prompt" } }
    "3" = { class_type = "EmptyImage", inputs = { width = 64, height = 64, batch_size = 1, color = 0 } }
    "4" = { class_type = "ImageNoiseSampler", inputs = { image = ["3", 0], seed = 0, steps = 4, denoise = 0.5 } }
    "9" = { class_type = "SaveImage", inputs = { images = ["4", 0], filename_prefix = "product" } }
  })

  # Row key => { node id => { input => value } }, as provider::svc::workflow_set_inputs takes.
  # Write-only: state keeps each row's digest, not the row.
  rows = {
    for r in local.products : r.sku => {
      "1" = { value = r.prompt }
      "4" = { seed = tonumber(r.seed) }
    }
  }

  max_in_flight = 64                   # above the jobs the service runs at once (here 32)
  output_dir    = "${path.module}/out" # out/<sku>/<file name>, verified by hash
  rerun_failed  = false                # set true to run the failed rows again, and nothing else

  lifecycle {
    # A failed row is a warning, never an error (an error would taint the whole batch); make the
    # run go red when any row failed. Until the failed rows run again, are changed or removed,
    # every plan fails too: a check block with the same condition warns instead.
    postcondition {
      condition     = self.failed == 0
      error_message = "${self.failed} rows failed; see the warnings, or results[key].error."
    }
  }
}

# Chain a row's output into another job by asset id: outputs are asset ids by the id of the node
# that saved them (here the template's SaveImage node, "9").
output "hero_image" {
  value = svc_job_batch.products.results["sku-001"].outputs["9"][0]
}
