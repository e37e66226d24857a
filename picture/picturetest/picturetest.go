package picturetest

// Real images of every type package picture reads, made with real encoders,
// and the containers (ICO, AVIF, an EXIF orientation) the standard library
// cannot write.

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"testing"

	"github.com/HugoSmits86/nativewebp"
	"golang.org/x/image/bmp"
)

// Gradient is a w×h picture whose left half is see-through when alpha is set.
func Gradient(w, h int, alpha bool) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			a := uint8(255)
			if alpha && x < w/2 {
				a = 0
			}
			img.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / max(1, w-1)), uint8(y * 255 / max(1, h-1)), 128, a})
		}
	}
	return img
}

// Noise is a w×h opaque picture no encoder can shrink.
func Noise(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < len(img.Pix); i += 8 {
		binary.LittleEndian.PutUint64(img.Pix[i:], r.Uint64())
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	return img
}

// PNG encodes img as a PNG, as fast as the encoder goes.
func PNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// JPEG encodes img as a JPEG of the quality.
func JPEG(t testing.TB, img image.Image, quality int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// GIF encodes img as a GIF.
func GIF(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := gif.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// WebP encodes img as a lossless WebP with the pure-Go encoder.
func WebP(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := nativewebp.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// BMP encodes img as a BMP.
func BMP(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := bmp.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ICO is an icon whose one entry is the PNG p of w×h (256 written as 0).
func ICO(p []byte, w, h int) []byte {
	b := []byte{0, 0, 1, 0, 1, 0, byte(w), byte(h), 0, 0, 1, 0, 32, 0}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
	b = binary.LittleEndian.AppendUint32(b, 22)
	return append(b, p...)
}

// box is an ISO BMFF box.
func box(typ string, body ...[]byte) []byte {
	b := bytes.Join(body, nil)
	return append(binary.BigEndian.AppendUint32(nil, uint32(8+len(b))), append([]byte(typ), b...)...)
}

// AVIF is the container of an AVIF with a w×h primary image (its coded
// data is not needed to read its size).
func AVIF(w, h int) []byte {
	ispe := append([]byte{0, 0, 0, 0}, binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, uint32(w)), uint32(h))...)
	return append(box("ftyp", []byte("avif"), []byte{0, 0, 0, 0}, []byte("mif1miafavif")),
		box("meta", []byte{0, 0, 0, 0}, box("hdlr", make([]byte, 24)), box("iprp", box("ipco", box("ispe", ispe))))...)
}

// WithOrientation puts an EXIF APP1 segment with Orientation o after a JPEG's SOI.
func WithOrientation(j []byte, o uint16) []byte {
	tiff := []byte("II*\x00\x08\x00\x00\x00\x01\x00")
	tiff = append(tiff, 0x12, 0x01, 3, 0, 1, 0, 0, 0, byte(o), byte(o>>8), 0, 0, 0, 0, 0, 0)
	body := append([]byte("Exif\x00\x00"), tiff...)
	seg := append([]byte{0xFF, 0xE1}, binary.BigEndian.AppendUint16(nil, uint16(len(body)+2))...)
	return append(append(append([]byte{}, j[:2]...), append(seg, body...)...), j[2:]...)
}
