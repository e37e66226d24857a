package picture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/png"

	xdraw "golang.org/x/image/draw"
)

// Header readers for the types the standard library and x/image do not
// read (or read only in part): AVIF, BMP and ICO; and a JPEG's EXIF
// orientation, which browsers apply and the standard decoder ignores.

func isAVIF(data []byte) bool {
	if len(data) < 16 || string(data[4:8]) != "ftyp" {
		return false
	}
	size := int(binary.BigEndian.Uint32(data[:4]))
	if size < 16 || size > len(data) {
		size = min(len(data), 64)
	}
	for i := 8; i+4 <= size; i += 4 {
		if i == 12 { // minor version
			continue
		}
		if b := string(data[i : i+4]); b == "avif" || b == "avis" {
			return true
		}
	}
	return false
}

// boxes walks the ISO BMFF boxes in data, calling fn with each type and
// body; a box longer than data is cut short.
func boxes(data []byte, fn func(typ string, body []byte) error) error {
	for len(data) > 0 {
		if len(data) < 8 {
			return errCutShort
		}
		size, hdr := uint64(binary.BigEndian.Uint32(data)), 8
		switch size {
		case 0:
			size = uint64(len(data))
		case 1:
			if len(data) < 16 {
				return errCutShort
			}
			size, hdr = binary.BigEndian.Uint64(data[8:]), 16
		}
		if size < uint64(hdr) {
			return errors.New("bad box size")
		}
		if size > uint64(len(data)) {
			return errCutShort
		}
		if err := fn(string(data[4:8]), data[hdr:size]); err != nil {
			return err
		}
		data = data[size:]
	}
	return nil
}

// avifSize reads the largest image spatial extent (ispe) of meta/iprp/ipco:
// the primary image's, which a grid's tiles never exceed.
func avifSize(data []byte) (w, h int, err error) {
	err = boxes(data, func(typ string, body []byte) error {
		if typ != "meta" || len(body) < 4 {
			return nil
		}
		return boxes(body[4:], func(typ string, body []byte) error {
			if typ != "iprp" {
				return nil
			}
			return boxes(body, func(typ string, body []byte) error {
				if typ != "ipco" {
					return nil
				}
				return boxes(body, func(typ string, body []byte) error {
					if typ == "ispe" && len(body) >= 12 {
						bw, bh := int(binary.BigEndian.Uint32(body[4:])), int(binary.BigEndian.Uint32(body[8:]))
						if int64(bw)*int64(bh) > int64(w)*int64(h) {
							w, h = bw, bh
						}
					}
					return nil
				})
			})
		})
	})
	if err == nil && w == 0 {
		err = errors.New("no image size")
	}
	return w, h, err
}

func validBMPHeader(dibSize uint32) bool {
	switch dibSize {
	case 12, 16, 40, 52, 56, 64, 108, 124:
		return true
	}
	return false
}

// bmpSize reads a BMP's size from its headers, whatever its compression,
// and checks that the pixels the headers promise are there.
func bmpSize(data []byte) (w, h int, err error) {
	le := binary.LittleEndian
	dib := le.Uint32(data[14:18])
	if int64(len(data)) < 14+int64(dib) {
		return 0, 0, errCutShort
	}
	var bpp, compression uint32
	if dib == 12 {
		w, h, bpp = int(le.Uint16(data[18:])), int(le.Uint16(data[20:])), uint32(le.Uint16(data[24:]))
	} else {
		w, h = int(int32(le.Uint32(data[18:]))), int(int32(le.Uint32(data[22:])))
		bpp = uint32(le.Uint16(data[28:]))
		if dib >= 20 {
			compression = le.Uint32(data[30:])
		}
	}
	if h < 0 {
		h = -h
	}
	if w <= 0 || h <= 0 || w > 1<<20 || h > 1<<20 {
		return 0, 0, errors.New("bad BMP size")
	}
	offset := int64(le.Uint32(data[10:14]))
	need := offset
	if compression == 0 || compression == 3 { // uncompressed rows
		need += (int64(bpp)*int64(w) + 31) / 32 * 4 * int64(h)
	}
	if int64(len(data)) < need {
		return 0, 0, errCutShort
	}
	return w, h, nil
}

// icoSize reads an icon's largest image, whose directory entry says 0 for
// 256 and whose PNG, when it holds one, says its own size.
func icoSize(data []byte) (w, h int, err error) {
	le := binary.LittleEndian
	n := int(le.Uint16(data[4:6]))
	if len(data) < 6+16*n {
		return 0, 0, errCutShort
	}
	for i := range n {
		e := data[6+16*i:]
		ew, eh := int(e[0]), int(e[1])
		if ew == 0 {
			ew = 256
		}
		if eh == 0 {
			eh = 256
		}
		size, off := int64(le.Uint32(e[8:])), int64(le.Uint32(e[12:]))
		if size == 0 || off < int64(6+16*n) {
			return 0, 0, errors.New("bad icon entry")
		}
		if off+size > int64(len(data)) {
			return 0, 0, errCutShort
		}
		if body := data[off : off+size]; bytes.HasPrefix(body, []byte("\x89PNG\r\n\x1a\n")) {
			cfg, err := png.DecodeConfig(bytes.NewReader(body))
			if err != nil {
				return 0, 0, err
			}
			ew, eh = cfg.Width, cfg.Height
		}
		if ew*eh > w*h {
			w, h = ew, eh
		}
	}
	return w, h, nil
}

// jpegOrientation reads the EXIF Orientation (1 to 8) of a JPEG, 1 when it
// has none. Browsers apply it, so a copy made here must too.
func jpegOrientation(data []byte) int {
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xFF {
			return 1
		}
		marker := data[i+1]
		if marker == 0xFF { // fill byte
			i++
			continue
		}
		if marker == 0xDA || marker == 0xD9 { // start of scan, end of image
			return 1
		}
		n := int(binary.BigEndian.Uint16(data[i+2:]))
		if n < 2 || i+2+n > len(data) {
			return 1
		}
		if body := data[i+4 : i+2+n]; marker == 0xE1 && bytes.HasPrefix(body, []byte("Exif\x00\x00")) {
			return exifOrientation(body[6:])
		}
		i += 2 + n
	}
	return 1
}

func exifOrientation(tiff []byte) int {
	if len(tiff) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(tiff[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	ifd := int64(bo.Uint32(tiff[4:]))
	if ifd+2 > int64(len(tiff)) {
		return 1
	}
	n := int64(bo.Uint16(tiff[ifd:]))
	for k := range n {
		e := ifd + 2 + 12*k
		if e+12 > int64(len(tiff)) {
			return 1
		}
		if bo.Uint16(tiff[e:]) == 0x0112 && bo.Uint16(tiff[e+2:]) == 3 {
			if o := int(bo.Uint16(tiff[e+8:])); o >= 1 && o <= 8 {
				return o
			}
			return 1
		}
	}
	return 1
}

// orient turns img as EXIF orientation o says a browser shows it.
func orient(img image.Image, o int) image.Image {
	if o <= 1 || o > 8 {
		return img
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	src := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.Draw(src, src.Bounds(), img, b.Min, xdraw.Src)
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := range h {
		for x := range w {
			var dx, dy int
			switch o {
			case 2: // mirrored
				dx, dy = w-1-x, y
			case 3: // turned 180°
				dx, dy = w-1-x, h-1-y
			case 4: // mirrored vertically
				dx, dy = x, h-1-y
			case 5: // transposed
				dx, dy = y, x
			case 6: // turned 90° clockwise
				dx, dy = h-1-y, x
			case 7: // transversed
				dx, dy = h-1-y, w-1-x
			case 8: // turned 90° anticlockwise
				dx, dy = y, w-1-x
			}
			si, di := src.PixOffset(x, y), dst.PixOffset(dx, dy)
			copy(dst.Pix[di:di+4], src.Pix[si:si+4])
		}
	}
	return dst
}
