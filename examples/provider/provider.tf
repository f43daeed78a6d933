terraform {
  required_providers {
    svc = {
      source = "svc-org/svc"
    }
  }
}

variable "svc_endpoint" {
  description = "Base URL of the workflow service. Leave null to use SVC_ENDPOINT (default http://127.0.0.1:8188)."
  type        = string
  default     = null
}

variable "svc_api_key" {
  description = "API key. Leave null to use SVC_API_KEY."
  type        = string
  default     = null
  sensitive   = true
}

provider "svc" {
  endpoint = var.svc_endpoint
  api_key  = var.svc_api_key

  # Optional: separate hosts for the model router and the node registry
  # (default: endpoint), the retry budget for transient failures, and the
  # longest a refresh or data source read may take as a whole.
  # router_endpoint   = "https://router.example.com"
  # registry_endpoint = "https://registry.example.com"
  # max_retries       = 5
  # read_timeout      = "2m"
}
