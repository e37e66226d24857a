package picture

import (
	"bytes"
	"errors"
	"image/jpeg"
	"sync"
	"testing"

	"github.com/HugoSmits86/nativewebp"
	"github.com/chopin-desktop/chopin/picture/picturetest"
	"golang.org/x/image/webp"
)

// Smaller copies that fit, keep transparency and a JPEG's turn, thumbnails,
// and the benchmarks docs/performance.md reports. The images are real,
// made here with real encoders; package room's tests read every type
// through a tool's result.

const tenMiB = 10 << 20

// fit measures data as typ and makes the Image to keep, as a caller does.
func fit(t testing.TB, typ *Type, data []byte, maxBytes int64) Image {
	t.Helper()
	w, h, err := Measure(typ, data)
	if err != nil {
		t.Fatal(err)
	}
	img, err := Fit(typ, data, w, h, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestLookupAndSniff(t *testing.T) {
	for name, want := range map[string]*Type{
		"image/png": PNG, "Image/PNG; charset=binary": PNG, "image/apng": PNG, "image/jpg": JPEG,
		"image/x-ms-bmp": BMP, "image/vnd.microsoft.icon": ICO, "image/svg+xml": nil, "text/html": nil,
	} {
		if got := Lookup(name); got != want {
			t.Errorf("Lookup(%q) = %v, want %v", name, got, want)
		}
	}
	pngBytes := picturetest.PNG(t, picturetest.Gradient(4, 4, false))
	if Sniff(pngBytes) != PNG || Sniff(picturetest.AVIF(4, 4)) != AVIF || Sniff([]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)) != nil {
		t.Error("Sniff read the wrong type")
	}
	if _, _, err := Measure(JPEG, pngBytes); err == nil || err.Error() != "its bytes are a PNG image, not a JPEG" {
		t.Errorf("PNG bytes measured as a JPEG: %v", err)
	}
}

// A 12 MB picture is stored as a smaller copy that fits.
var (
	bigOnce sync.Once
	bigPNG  []byte
)

func twelveMBPNG(t testing.TB) []byte {
	bigOnce.Do(func() { bigPNG = picturetest.PNG(t, picturetest.Noise(2000, 2000)) })
	return bigPNG
}

func TestLargeImageStoredSmaller(t *testing.T) {
	data := twelveMBPNG(t)
	if len(data) < 12_000_000 {
		t.Fatalf("the noisy PNG is only %d bytes", len(data))
	}
	const limit = tenMiB
	img := fit(t, PNG, data, limit)
	if img.MimeType != "image/webp" || img.Ext != "webp" || len(img.Data) > limit || img.Width >= 2000 || img.Width < 1000 {
		t.Fatalf("stored %s %d×%d, %d bytes", img.MimeType, img.Width, img.Height, len(img.Data))
	}
	cfg, err := webp.DecodeConfig(bytes.NewReader(img.Data))
	if err != nil || cfg.Width != img.Width || cfg.Height != img.Height {
		t.Fatalf("stored WebP reads as %+v, %v", cfg, err)
	}
	if ratio := float64(img.Width) / float64(img.Height); ratio < 0.99 || ratio > 1.01 {
		t.Fatalf("aspect ratio %f", ratio)
	}
	t.Logf("%d bytes of PNG stored as %d×%d WebP of %d bytes", len(data), img.Width, img.Height, len(img.Data))
}

func TestWideImageKeepsAlpha(t *testing.T) {
	data := picturetest.PNG(t, picturetest.Gradient(5000, 40, true))
	img := fit(t, PNG, data, tenMiB)
	if img.MimeType != "image/webp" || img.Width != 4096 || img.Height != 33 {
		t.Fatalf("stored %s %d×%d", img.MimeType, img.Width, img.Height)
	}
	dec, err := webp.Decode(bytes.NewReader(img.Data))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, a := dec.At(10, 10).RGBA(); a != 0 {
		t.Fatalf("left half has alpha %d, want transparent", a)
	}
	if _, _, _, a := dec.At(4000, 10).RGBA(); a != 0xffff {
		t.Fatalf("right half has alpha %d, want opaque", a)
	}
}

func TestLargeJPEGStaysJPEG(t *testing.T) {
	data := picturetest.WithOrientation(picturetest.JPEG(t, picturetest.Gradient(4200, 300, false), 90), 8)
	img := fit(t, JPEG, data, tenMiB)
	// Turned a quarter by EXIF, it shows 300 wide and 4200 tall.
	if img.MimeType != "image/jpeg" || img.Ext != "jpg" || img.Height != 4096 || img.Width != 293 {
		t.Fatalf("stored %s %d×%d", img.MimeType, img.Width, img.Height)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(img.Data))
	if err != nil || cfg.Width != 293 || cfg.Height != 4096 || jpegOrientation(img.Data) != 1 {
		t.Fatalf("stored JPEG reads as %+v, %v", cfg, err)
	}
}

// An image over MaxSide needs a smaller copy; an AVIF is never decoded, so
// none can be made.
func TestTooManyPixels(t *testing.T) {
	data := picturetest.AVIF(8000, 6000)
	w, h, err := Measure(AVIF, data)
	if err != nil || w != 8000 || h != 6000 {
		t.Fatalf("measured %d×%d, %v", w, h, err)
	}
	_, err = Fit(AVIF, data, w, h, tenMiB)
	var tmp *TooManyPixelsError
	if !errors.As(err, &tmp) || tmp.Width != 8000 || tmp.Height != 6000 ||
		err.Error() != "it is more pixels than Chopin can make smaller (8000 × 6000)" {
		t.Fatalf("got %v", err)
	}
}

func TestThumbnail(t *testing.T) {
	pngImg := newImage(PNG, picturetest.PNG(t, picturetest.Gradient(800, 400, true)), 800, 400)
	thumb, ok, err := Thumbnail(pngImg, 360)
	if err != nil || !ok {
		t.Fatalf("thumbnail: %v %v", ok, err)
	}
	if thumb.MimeType != "image/webp" || thumb.Width != 360 || thumb.Height != 180 {
		t.Fatalf("thumbnail %s %d×%d", thumb.MimeType, thumb.Width, thumb.Height)
	}
	dec, err := webp.Decode(bytes.NewReader(thumb.Data))
	if err != nil || dec.Bounds().Dx() != 360 {
		t.Fatalf("thumbnail decodes as %v, %v", dec.Bounds(), err)
	}
	if _, _, _, a := dec.At(5, 5).RGBA(); a != 0 {
		t.Fatal("thumbnail lost transparency")
	}

	jpgImg := newImage(JPEG, picturetest.JPEG(t, picturetest.Gradient(800, 400, false), 90), 800, 400)
	if thumb, ok, err = Thumbnail(jpgImg, 160); err != nil || !ok || thumb.MimeType != "image/jpeg" || thumb.Width != 160 || thumb.Height != 80 {
		t.Fatalf("JPEG thumbnail %s %d×%d %v %v", thumb.MimeType, thumb.Width, thumb.Height, ok, err)
	}
	// No wider than asked, a GIF (it may move), an AVIF: the image itself.
	for _, img := range []Image{
		pngImg,
		newImage(GIF, picturetest.GIF(t, picturetest.Gradient(800, 400, false)), 800, 400),
		newImage(AVIF, picturetest.AVIF(800, 400), 800, 400),
	} {
		w := 360
		if img.MimeType == "image/png" {
			w = 800
		}
		if _, ok, err := Thumbnail(img, w); ok || err != nil {
			t.Errorf("%s at %d: ok %v, %v", img.MimeType, w, ok, err)
		}
	}
}

func BenchmarkKeepImage12MBPNG(b *testing.B) {
	data := twelveMBPNG(b)
	w, h, err := Measure(PNG, data)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		img, err := Fit(PNG, data, w, h, tenMiB)
		if err != nil || len(img.Data) > tenMiB {
			b.Fatal(err)
		}
	}
}

func BenchmarkKeepImage12MBJPEG(b *testing.B) {
	// A 6000×4000 photo-sized JPEG of noise, about 12 MB at quality 90.
	data := picturetest.JPEG(b, picturetest.Noise(3000, 4000), 90)
	w, h, err := Measure(JPEG, data)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("JPEG of %d bytes", len(data))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		img, err := Fit(JPEG, data, w, h, tenMiB)
		if err != nil || len(img.Data) > tenMiB || img.Height > MaxSide {
			b.Fatal(err)
		}
	}
}

func BenchmarkThumbnail360(b *testing.B) {
	img := newImage(JPEG, picturetest.JPEG(b, picturetest.Gradient(4000, 3000, false), 90), 4000, 3000)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := Thumbnail(img, 360); !ok || err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShrinkToWebP makes the stored copy of two pictures over the
// limits with the lossless WebP encoder at its default effort (what was
// used before) and at its least effort (what is used now), side by side:
// the 12 MB noisy PNG (over the byte limit) and a 6000×3000 transparent
// gradient (over MaxSide). It reports the copy's bytes, so a faster effort
// that made larger copies would show.
func BenchmarkShrinkToWebP(b *testing.B) {
	pictures := []struct {
		name string
		data []byte
	}{
		{"noisy-12MB-PNG", twelveMBPNG(b)},
		{"transparent-6000px-PNG", picturetest.PNG(b, picturetest.Gradient(6000, 3000, true))},
	}
	efforts := []struct {
		name  string
		level nativewebp.CompressionLevel
	}{
		{"default-effort", nativewebp.DefaultCompression},
		{"least-effort", nativewebp.BestSpeed},
	}
	defer func(was nativewebp.CompressionLevel) { webpEffort = was }(webpEffort)
	for _, p := range pictures {
		w, h, err := Measure(PNG, p.data)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range efforts {
			b.Run(p.name+"/"+e.name, func(b *testing.B) {
				webpEffort = e.level
				var img Image
				for b.Loop() {
					if img, err = Fit(PNG, p.data, w, h, tenMiB); err != nil || img.MimeType != "image/webp" {
						b.Fatal(img.MimeType, err)
					}
				}
				b.ReportMetric(float64(len(img.Data)), "copy-bytes")
			})
		}
	}
}
