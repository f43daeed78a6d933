# Fill a workflow exported from the editor ("Export (API)") with this run's values.
resource "svc_job" "poster" {
  workflow = provider::svc::workflow_set_inputs(file("${path.module}/workflow_api.json"), {
    "5" = { width = 1024, height = 1536 }
    "6" = { text = "a lighthouse at dusk, oil on canvas" }
    "3" = { seed = 1234, steps = 30 }
  })
}
