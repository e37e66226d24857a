package picture

import (
	"image"
	"image/color"
	"testing"

	"github.com/chopin-desktop/chopin/picture/picturetest"
)

// The smaller copy averages what it covers: halving averages pairs, a
// share of a pixel counts by its share, and see-through pixels do not
// darken their neighbours (the averaging is of premultiplied values).
func TestResizeAverages(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 4, 1))
	for x, v := range []uint8{0, 100, 200, 200} {
		src.SetNRGBA(x, 0, color.NRGBA{v, v, v, 255})
	}
	half := resize(src, 2, 1).(*image.RGBA)
	if got := []uint8{half.Pix[0], half.Pix[4]}; got[0] != 50 || got[1] != 200 {
		t.Errorf("halved: %v, want [50 200]", got)
	}
	// Three pixels into two: each takes one whole and half of the middle.
	third := resize(src.SubImage(image.Rect(0, 0, 3, 1)), 2, 1).(*image.RGBA)
	if got := []uint8{third.Pix[0], third.Pix[4]}; got[0] != 33 || got[1] != 167 {
		t.Errorf("three into two: %v, want [33 167]", got)
	}
	// A white pixel beside a see-through one stays white, half covered.
	clearWhite := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	clearWhite.SetNRGBA(1, 0, color.NRGBA{255, 255, 255, 255})
	clearWhite.SetNRGBA(1, 1, color.NRGBA{255, 255, 255, 255})
	r, g, b, a := resize(clearWhite, 1, 1).At(0, 0).RGBA()
	if c := color.NRGBAModel.Convert(color.RGBA64{uint16(r), uint16(g), uint16(b), uint16(a)}).(color.NRGBA); c.R < 254 || c.A < 127 || c.A > 128 {
		t.Errorf("white beside see-through: %v", c)
	}
}

// A picture larger than MaxPixels is refused from its header: nothing of it
// is decoded, however few bytes it takes.
func TestTooManyPixelsFromHeader(t *testing.T) {
	data := picturetest.PNG(t, image.NewGray(image.Rect(0, 0, 10000, 5001)))
	w, h, err := Measure(PNG, data)
	if err != nil || w != 10000 || h != 5001 {
		t.Fatalf("measured %d×%d, %v", w, h, err)
	}
	_, err = Fit(PNG, data, w, h, tenMiB)
	if err == nil || err.Error() != "it is more pixels than Chopin can make smaller (10000 × 5001)" {
		t.Fatalf("got %v", err)
	}
	if _, ok, err := Thumbnail(newImage(PNG, data, w, h), 360); ok || err != nil {
		t.Fatalf("thumbnail: %v %v", ok, err)
	}
}
