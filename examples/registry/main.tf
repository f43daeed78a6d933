# Publish and translate my nodes: claim every node of a publisher from one map,
# then post each node's translations once its claim holds.
#
#   export SVC_REGISTRY_TOKEN=...        # a JWT, or an API key with the product prefix
#   terraform apply -var publisher_id=acme -var repo_token="$GITHUB_TOKEN"
#   terraform destroy -var publisher_id=acme   # no repository token needed: it only claims

terraform {
  required_version = ">= 1.11" # write-only attributes and ephemeral variables
  required_providers {
    svc = {
      source = "svc-org/svc"
    }
  }
}

provider "svc" {
  # registry_endpoint defaults to endpoint; registry_token to api_key.
  # Both can come from SVC_REGISTRY_ENDPOINT / SVC_REGISTRY_TOKEN.
}

variable "publisher_id" {
  description = "Publisher the nodes move into; you must be one of its members."
  type        = string
}

variable "repo_token" {
  description = "Code-hosting token of the owner of the nodes' repositories. Used only to claim; never stored. Needed only by an apply that claims a node (the plan says so); destroy and later applies do without."
  type        = string
  sensitive   = true
  ephemeral   = true
  default     = null
}

variable "repo_token_version" {
  description = "Bump when you rotate repo_token, to record the rotation."
  type        = number
  default     = 1
}

variable "nodes" {
  description = "Node id to its translations (language code to translated fields)."
  type = map(map(object({
    title       = string
    description = optional(string)
  })))
  default = {
    "acme-upscaler" = {
      fr = { title = "Agrandisseur", description = "Agrandit une image sans perte de détails." }
      de = { title = "Hochskalierer" }
    }
    "acme-denoiser" = {
      fr = { title = "Débruiteur" }
      ja = { title = "ノイズ除去" }
    }
  }
}

resource "svc_registry_node_claim" "node" {
  for_each = var.nodes

  publisher_id          = var.publisher_id
  node_id               = each.key
  repo_token_wo         = var.repo_token
  repo_token_wo_version = var.repo_token_version
}

resource "svc_registry_node_translation" "node" {
  for_each = var.nodes

  # Referencing the claim orders the post after it: only a publisher's member
  # may translate a node.
  node_id = svc_registry_node_claim.node[each.key].node_id
  # Drop unset optional fields so the registry receives only what was written.
  data = jsonencode({
    for lang, fields in each.value : lang => { for k, v in fields : k => v if v != null }
  })
}

output "claimed_nodes" {
  value = [for c in svc_registry_node_claim.node : c.id]
}
