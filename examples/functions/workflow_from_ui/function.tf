# Convert offline, at plan time, with an object_info document: here the service's, read once by
# svc_object_info; a copy saved in the repository works the same without asking the service.
data "svc_object_info" "classes" {}

locals {
  portrait = provider::svc::workflow_from_ui(
    file("${path.module}/portrait.json"),
    data.svc_object_info.classes.json,
  )
}

# The result is an API-format workflow like any other: edit it, then run it.
resource "svc_job" "portrait" {
  workflow = provider::svc::workflow_set_inputs(local.portrait, {
    "9" = { filename_prefix = "portrait" }
  })
}
