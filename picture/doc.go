// Package picture tells what an image really is and makes copies of it:
// it sniffs the type from the bytes, checks that they are a whole image of
// the type they claim, reads the size a browser shows, decodes, resizes and
// encodes (JPEG, and WebP with the pure-Go encoder so the binary stays
// static), and makes thumbnails.
//
// It is a leaf library: it imports nothing of Chopin's and does no I/O;
// storing, serving and addressing images (their paths, the widths a route
// offers) are its callers' business. It must never accept a type a browser
// would not draw as a raster (no SVG, no HTML), and it bounds the pixels it
// decodes (MaxPixels, read from the header before decoding) and the pixels
// decoded at once in the whole process (its budget), since the bytes come
// from anyone.
package picture
