# The repository token proves you own the node's repository. It is write-only:
# pass it through an ephemeral variable so it is never stored in state or plan.
variable "repo_token" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "svc_registry_node_claim" "upscaler" {
  publisher_id  = "acme"
  node_id       = "acme-upscaler"
  repo_token_wo = var.repo_token

  # Bump when you rotate the repository token. The claim already holds, so this
  # only records the rotation; nothing is sent to the registry.
  repo_token_wo_version = 1

  # Destroying this resource deletes the node from the registry. Leave it false
  # (the default) to keep the node and only stop managing the claim.
  delete_node_on_destroy = false
}
