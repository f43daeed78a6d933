# Batch generation with svc_job_batch: one job per row of prompts.csv (50 rows), one resource in
# state, the workflow template stored once, every output downloaded to out/<row>/.
# Each job saves its prompt as text beside the image, so the outputs explain themselves.
#
# Adding rows to the CSV submits only them; editing a row runs that row again; removing one forgets
# it. A row that fails does not fail the apply (it is reported as a warning and counted in
# `failed`); the postcondition below makes the run go red anyway, and every plan after it, until
# the failed rows run again, change or go (a check block with the same condition would only warn).
# Set rerun_failed = true to run the failed rows again, and nothing else.

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

resource "svc_job_batch" "catalogue" {
  # The template: each row below overrides some of its inputs.
  workflow = jsonencode({
    "1" = { class_type = "PrimitiveString", inputs = { value = "a prompt" } }
    "2" = { class_type = "SaveText", inputs = { text = ["1", 0], filename_prefix = "prompt" } }
    "3" = { class_type = "EmptyImage", inputs = { width = 64, height = 64, batch_size = 1, color = 0 } }
    "4" = { class_type = "ImageNoiseSampler", inputs = { image = ["3", 0], seed = 0, steps = 4, denoise = 0.5 } }
    "5" = { class_type = "SaveImage", inputs = { images = ["4", 0], filename_prefix = "image" } }
  })

  # Row key => { node id => { input => value } }, straight from the CSV. Write-only: state keeps
  # each row's digest, not the row.
  rows = {
    for row in csvdecode(file("${path.module}/prompts.csv")) : row.name => {
      "1" = { value = row.prompt }
      "3" = { color = tonumber(row.color) }
      "4" = { seed = tonumber(row.seed) }
    }
  }

  max_in_flight = 16
  output_dir    = "${abspath(path.module)}/out"

  lifecycle {
    postcondition {
      condition     = self.failed == 0
      error_message = "Some rows failed: see the warnings, or each row's results[key].error."
    }
  }
}

output "succeeded" {
  value = svc_job_batch.catalogue.succeeded
}

# A row's outputs are asset ids by the node that saved them: node "5" saves the image.
output "images" {
  value = { for key, row in svc_job_batch.catalogue.results : key => row.outputs["5"][0] if row.status == "succeeded" }
}
