# An image for a workflow's LoadImage node. Editing the file uploads it again.
resource "svc_upload" "photo" {
  source    = "${path.module}/photo.png"
  overwrite = true
}

# A mask belongs to an image: original_ref names it.
resource "svc_upload" "photo_mask" {
  source = "${path.module}/photo-mask.png"
  kind   = "mask"
  original_ref = jsonencode({
    filename  = svc_upload.photo.name
    subfolder = svc_upload.photo.subfolder
    type      = "input"
  })
}

output "photo_name" {
  value = svc_upload.photo.name
}
