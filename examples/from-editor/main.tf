# From the editor: run a workflow exactly as the graphical editor saved it (its UI format, with
# nodes, links and widget values), converted by the provider. workflow.json holds a subgraph
# ("Noise, blur and flip", whose blur node is bypassed), a primitive node giving the file name,
# a reroute and a note; the conversion resolves all of them and the job runs the result.
#
# The endpoint defaults to SVC_ENDPOINT; the API key, if the service needs one, comes from
# SVC_API_KEY.

terraform {
  required_version = ">= 1.11"
  required_providers {
    svc = {
      source = "svc-org/svc"
    }
  }
}

variable "endpoint" {
  description = "Workflow service URL; null uses SVC_ENDPOINT."
  type        = string
  default     = null
}

provider "svc" {
  endpoint = var.endpoint
}

variable "batch_size" {
  description = "How many images the job generates (the export's canvas node makes 2)."
  type        = number
  default     = 2
}

# Converted with the service's own node classes. Reformatting workflow.json (or saving it again
# with the nodes moved around) gives the same api_workflow, so the job is not run again.
data "svc_workflow_from_ui" "editor" {
  ui_workflow = file("${path.module}/workflow.json")
}

resource "svc_job" "render" {
  # The converted workflow is an API-format workflow like any other: the canvas node keeps its
  # editor id "1", so its batch size can be set here.
  workflow = provider::svc::workflow_set_inputs(data.svc_workflow_from_ui.editor.api_workflow, {
    "1" = { batch_size = var.batch_size }
  })

  timeouts = {
    create = "10m"
  }
}

resource "svc_output_file" "image" {
  count = var.batch_size

  asset_id      = svc_job.render.outputs[count.index].id
  expected_hash = svc_job.render.outputs[count.index].hash
  path          = "${abspath(path.module)}/out/${svc_job.render.outputs[count.index].name}"
}

# The same conversion offline, from an object_info document (here the service's; a saved copy
# works too): usable where the service cannot be asked, such as in a module's validation.
data "svc_object_info" "classes" {}

output "offline_conversion_matches" {
  value = provider::svc::workflow_from_ui(file("${path.module}/workflow.json"), data.svc_object_info.classes.json) == data.svc_workflow_from_ui.editor.api_workflow
}

output "api_workflow" {
  description = "The converted workflow: subgraph nodes have ids <subgraph node>:<inner node>."
  value       = jsondecode(data.svc_workflow_from_ui.editor.api_workflow)
}

output "files" {
  value = [for f in svc_output_file.image : f.path]
}
