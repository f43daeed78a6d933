data "svc_model_schema" "echo" {
  model = "demo/echo"
}

output "echo_input_schema" {
  value = jsondecode(data.svc_model_schema.echo.input_schema)
}

# Binary outputs need result_path on svc_router_request.
output "echo_output_media_types" {
  value = data.svc_model_schema.echo.output_media_types
}
