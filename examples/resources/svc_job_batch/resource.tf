# One resource, one job per row: each row is the template with its overrides applied.
resource "svc_job_batch" "products" {
  workflow = file("${path.module}/workflow_api.json")

  # Row key => { node id => { input => value } }, as provider::svc::workflow_set_inputs takes.
  # Write-only: state keeps each row's digest, not the row.
  rows = {
    for r in csvdecode(file("${path.module}/rows.csv")) : r.sku => {
      "6" = { text = r.prompt }
      "3" = { seed = tonumber(r.seed) }
    }
  }

  max_in_flight = 64                   # above the jobs the service runs at once (here 32)
  output_dir    = "${path.module}/out" # out/<sku>/<file name>, verified by hash
  rerun_failed  = false                # set true to run the failed rows again, and nothing else

  lifecycle {
    # A failed row is a warning, never an error (an error would taint the whole batch); make the
    # run go red when any row failed.
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
