package picture

import (
	"image"
	"image/draw"
	"math"
)

// Making a picture smaller by averaging: each pixel of the copy is the
// mean of the source pixels it covers, weighted by how much of each it
// covers, so nothing is skipped. It reads the source one row at a time and
// keeps only the copy and two rows of sums, so the memory it needs beyond
// the source is the copy's own: a general resampler (x/image/draw's
// kernels) keeps a whole intermediate picture of float64s, which for a
// 7000-pixel-tall source is near a gigabyte.

// span is the source pixels one pixel of the copy covers along one axis:
// from first, with the weight of each.
type span struct {
	first   int
	weights []float32
}

// spans divides n source pixels among m pixels of the copy (m <= n).
func spans(n, m int) []span {
	scale := float64(n) / float64(m)
	out := make([]span, m)
	for i := range m {
		a, b := float64(i)*scale, float64(i+1)*scale
		first, last := int(math.Floor(a)), min(n, int(math.Ceil(b)))
		s := span{first: first, weights: make([]float32, 0, last-first)}
		for j := first; j < last; j++ {
			lo, hi := max(a, float64(j)), min(b, float64(j+1))
			s.weights = append(s.weights, float32((hi-lo)/scale))
		}
		out[i] = s
	}
	return out
}

// resize makes src w×h, which is no larger than src on either side.
func resize(src image.Image, w, h int) image.Image {
	b := src.Bounds()
	if b.Dx() == w && b.Dy() == h {
		return src
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	cols, rows := spans(b.Dx(), w), spans(b.Dy(), h)
	line := image.NewRGBA(image.Rect(0, 0, b.Dx(), 1)) // one source row, premultiplied
	across := make([]float32, 4*w)                     // that row averaged across
	sum := make([]float32, 4*w)                        // the copy's row so far
	loaded := -1
	for y, r := range rows {
		clear(sum)
		for k, wy := range r.weights {
			sy := r.first + k
			if sy != loaded {
				draw.Draw(line, line.Rect, src, image.Pt(b.Min.X, b.Min.Y+sy), draw.Src)
				averageAcross(across, line.Pix, cols)
				loaded = sy
			}
			for i, v := range across {
				sum[i] += v * wy
			}
		}
		out := dst.Pix[y*dst.Stride : y*dst.Stride+4*w]
		for i, v := range sum {
			out[i] = uint8(min(255, max(0, v+0.5)))
		}
	}
	return dst
}

// averageAcross averages one row of RGBA pixels into the copy's columns.
func averageAcross(dst []float32, pix []uint8, cols []span) {
	for x, c := range cols {
		var r, g, b, a float32
		p := pix[4*c.first:]
		for k, wx := range c.weights {
			r += float32(p[4*k]) * wx
			g += float32(p[4*k+1]) * wx
			b += float32(p[4*k+2]) * wx
			a += float32(p[4*k+3]) * wx
		}
		dst[4*x], dst[4*x+1], dst[4*x+2], dst[4*x+3] = r, g, b, a
	}
}
