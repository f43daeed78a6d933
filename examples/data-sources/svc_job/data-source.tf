# Consume the outputs of a job submitted elsewhere (another workspace, a pipeline).
data "svc_job" "upstream" {
  id = var.upstream_job_id
}

variable "upstream_job_id" {
  type = string
}

output "upstream_outputs" {
  value = [for o in data.svc_job.upstream.outputs : { name = o.name, id = o.id, hash = o.hash }]
}

# The live record of a job this configuration runs: the resource keeps what lasts (status,
# completed_at, expires_at, outputs, error); its timing, and while it runs its progress, are read here.
resource "svc_job" "render" {
  workflow = file("${path.module}/workflow_api.json")
}

data "svc_job" "render" {
  id = svc_job.render.id
}

output "render_timing" {
  value = {
    started_at   = data.svc_job.render.started_at
    execution_ms = lookup(data.svc_job.render.metrics, "execution_ms", null)
  }
}
