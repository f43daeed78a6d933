# Batch generation straight into an S3-compatible bucket: runners that are thrown away after the
# run (CI, HCP Terraform agents, Kubernetes pods) keep nothing on disk, so each output goes to
# the object <prefix>/<row key>/<name> instead, streamed from the service to the bucket and
# verified against its hash on the way, with its asset id and hash in the object's metadata.
#
# Credentials come from the AWS SDK's usual chain, never from this configuration:
#
#   export AWS_ACCESS_KEY_ID=...        # or AWS_PROFILE=..., or the instance's or pod's role
#   export AWS_SECRET_ACCESS_KEY=...
#   terraform apply -var 'bucket_url=s3://my-bucket/catalogue?region=eu-west-1'
#
# For a service that is not AWS, name its endpoint and use path-style addressing:
#   s3://my-bucket/catalogue?endpoint=https://<account>.r2.cloudflarestorage.com&region=auto&use_path_style=true
# and for a server on your own machine or network (MinIO, SeaweedFS, ...), its http:// address
# (requests go to the endpoint as written; without region, us-east-1 is assumed):
#   s3://my-bucket/catalogue?endpoint=http://127.0.0.1:9000&use_path_style=true
#
# The bucket must exist; the plan checks it (and the credentials) and lists the prefix, so an
# object deleted by hand is downloaded again by the next apply, without running its row again.
# Removing a row, or destroying the batch, deletes only the objects the batch wrote.

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

variable "bucket_url" {
  description = "Where the outputs go: s3://bucket/prefix, with ?region=...&endpoint=...&use_path_style=true as needed."
  type        = string
}

provider "svc" {
  endpoint = var.endpoint
}

resource "svc_job_batch" "catalogue" {
  workflow = jsonencode({
    "1" = { class_type = "EmptyImage", inputs = { width = 64, height = 64, batch_size = 1, color = 0 } }
    "2" = { class_type = "ImageNoiseSampler", inputs = { image = ["1", 0], seed = 0, steps = 4, denoise = 0.5 } }
    "3" = { class_type = "SaveImage", inputs = { images = ["2", 0], filename_prefix = "image" } }
  })

  # Twenty rows, each a seed and a colour.
  rows = {
    for i in range(20) : format("tile-%02d", i) => {
      "1" = { color = i * 10000 }
      "2" = { seed = i }
    }
  }

  max_in_flight = 8
  output_dir    = var.bucket_url
}

# Where each row's image is, by row key.
output "objects" {
  value = { for key, row in svc_job_batch.catalogue.results : key => "${trimsuffix(split("?", var.bucket_url)[0], "/")}/${key}/" if row.status == "succeeded" }
}
