data "svc_object_info" "all" {}

# Which inputs does SaveImage need?
output "save_image_inputs" {
  value = data.svc_object_info.all.classes["SaveImage"].required_inputs
}

# The choices of a choice input, from the raw document.
output "flip_methods" {
  value = jsondecode(data.svc_object_info.all.json)["ImageFlip"]["input"]["required"]["flip_method"][0]
}
