"""Static files with DEBUG off: hashed and compressed names from the manifest, or the plain
names when the manifest lacks them.

With DEBUG on, ``collectstatic`` copies the files under their plain names and writes no
manifest. WhiteNoise's own storage then fails every page with DEBUG off ("Missing
staticfiles manifest entry"). This one links the plain names instead, which WhiteNoise
serves from ``STATIC_ROOT``; run ``collectstatic`` again with DEBUG off for the hashed,
compressed, cached-forever files.
"""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticStorage(CompressedManifestStaticFilesStorage):
    def stored_name(self, name: str) -> str:
        try:
            return super().stored_name(name)
        except ValueError:  # not in the manifest (collected with DEBUG on): the plain name
            return name
