"""The verify tests' encoder: the session's model2vec encoder (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from curll.verify.encoder import Encoder, load_encoder


@pytest.fixture(scope="session")
def encoder(encoder_folder: Path) -> Encoder:
    return load_encoder("model2vec", str(encoder_folder))


PASSAGES = [
    "Mia found a small brown puppy under the bench in the park. It was cold and shaking, so she "
    "wrapped it in her red scarf and carried it home. Her dad gave the puppy warm milk, and soon "
    "it was wagging its tail and licking her hand.",
    "The class planted bean seeds in paper cups. Every morning the children measured how tall the "
    "green shoots had grown and drew a picture in their notebooks. After two weeks the tallest "
    "plant was as long as a pencil.",
    "Grandpa showed Leo how to count coins. Two dimes and one nickel make twenty-five cents, he "
    "said. Leo sorted the coins into piles and counted enough money to buy an apple at the market.",
    "When the storm came, the lights went out. Ava and her brother built a fort of blankets and "
    "read stories by flashlight. They listened to the thunder and guessed how far away the "
    "lightning was by counting the seconds.",
    "Sam learned that bees carry pollen from flower to flower. Without bees many fruits could not "
    "grow. He decided to plant sunflowers in the garden so the bees would have food all summer.",
]
