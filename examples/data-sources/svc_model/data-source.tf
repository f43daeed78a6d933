data "svc_model" "pixel" {
  id = "demo/pixel"
}

# Detail-only fields vary by model: read them from the raw detail record.
output "pixel_description" {
  value = jsondecode(data.svc_model.pixel.detail_json).description
}
