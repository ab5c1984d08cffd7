"""PIL's upright pixels of JPEG files, for tests/data/test_exif_orientation.cpp. Run with Debian's
python3-pil:
    python3 exif_orientation_check.py FILE.jpg...
For each FILE, writes FILE.pil: "WIDTH HEIGHT\n" and the RGB bytes of
ImageOps.exif_transpose(Image.open(FILE)).convert("RGB"), rows top to bottom (what torchvision's
loader would see with exif_transpose added to it).
"""
import sys

from PIL import Image, ImageOps


def main():
    for path in sys.argv[1:]:
        with Image.open(path) as im:
            upright = ImageOps.exif_transpose(im).convert("RGB")
        with open(path + ".pil", "wb") as f:
            f.write(f"{upright.width} {upright.height}\n".encode())
            f.write(upright.tobytes())


if __name__ == "__main__":
    main()
