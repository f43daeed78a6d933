# An editor export (saved with "Save", not "Export (API)"), converted with the service's node
# classes. Subgraphs, bypassed and muted nodes, reroutes and primitive nodes are resolved.
data "svc_workflow_from_ui" "portrait" {
  ui_workflow = file("${path.module}/portrait.json")
}

resource "svc_job" "portrait" {
  workflow = data.svc_workflow_from_ui.portrait.api_workflow
}
