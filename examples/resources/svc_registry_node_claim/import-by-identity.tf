# Adopt a claim made elsewhere. Nothing is read from the registry (it has no such operation), no
# claim is sent, and no repository token is needed.
import {
  to = svc_registry_node_claim.upscaler
  identity = {
    publisher_id = "acme"
    node_id      = "acme-upscaler"
  }
}
