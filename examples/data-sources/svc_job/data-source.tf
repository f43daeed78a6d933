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
