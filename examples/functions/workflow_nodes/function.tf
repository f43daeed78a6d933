locals {
  workflow   = file("${path.module}/workflow_api.json")
  save_nodes = provider::svc::workflow_nodes(local.workflow, "SaveImage")
}

# Give every save node of the workflow the same filename prefix.
resource "svc_job" "render" {
  workflow = provider::svc::workflow_set_inputs(local.workflow, {
    for id in local.save_nodes : id => { filename_prefix = "render" }
  })
}
