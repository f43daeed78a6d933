# A claim is imported by "<publisher_id>/<node_id>". Nothing is read from the
# registry (it has no such operation) and no repository token is needed.
terraform import svc_registry_node_claim.upscaler acme/acme-upscaler
