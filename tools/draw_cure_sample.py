"""Write the CURE sample suite: cure_sample.json (official CURE format) and the PNGs in cure_sample/.

Our own content: 20 simple scenes drawn with PIL (a sun and an umbrella, clocks, counts, positions, colours...).
Each has a box around the region the inference is about, a clue, 6 candidate inferences (one right) and a chain
of 2, 3 or 4 sub-questions with 6 candidates each. Deterministic: no text rendering (fonts differ between
systems), and candidate order comes from random.Random seeded with a string. Run from anywhere:

    python tools/draw_cure_sample.py
"""
from __future__ import annotations

import json
import math
import random
from collections import Counter
from pathlib import Path

from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent.parent / "evaluator" / "benchmarks" / "cure" / "sample"
OUT_JSON = HERE / "cure_sample.json"
OUT_DIR = HERE / "cure_sample"
W, H = 256, 192

SKY = (135, 196, 235)
NIGHT = (20, 24, 60)
GRASS = (90, 170, 80)
SAND = (236, 214, 160)
WHITE = (255, 255, 255)
BLACK = (0, 0, 0)
GREY = (128, 128, 128)
YELLOW = (250, 215, 40)
RED = (210, 40, 40)
GREEN = (40, 170, 60)
BLUE = (50, 90, 200)
BROWN = (130, 85, 45)
ORANGE = (240, 140, 30)


def box(x0, y0, x1, y1):
    """A CURE bbox from corner coordinates."""
    return {"left": x0, "top": y0, "width": x1 - x0, "height": y1 - y0}


def sun(d, cx, cy, r=18):
    d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=YELLOW)
    for k in range(8):
        a = k * math.pi / 4
        d.line([cx + (r + 4) * math.cos(a), cy + (r + 4) * math.sin(a),
                cx + (r + 12) * math.cos(a), cy + (r + 12) * math.sin(a)], fill=YELLOW, width=3)


def umbrella(d, cx, top, r=34, color=RED):
    d.pieslice([cx - r, top, cx + r, top + 2 * r], 180, 360, fill=color)
    d.line([cx, top + r, cx, top + r + 46], fill=BLACK, width=3)
    d.arc([cx, top + r + 38, cx + 12, top + r + 50], 0, 180, fill=BLACK, width=3)


def person(d, cx, top, color=BLUE):
    d.ellipse([cx - 7, top, cx + 7, top + 14], fill=(240, 200, 170))
    d.rectangle([cx - 8, top + 15, cx + 8, top + 42], fill=color)
    d.line([cx - 4, top + 42, cx - 6, top + 62], fill=BLACK, width=3)
    d.line([cx + 4, top + 42, cx + 6, top + 62], fill=BLACK, width=3)


def clock(d, cx, cy, r, hour, minute, face=WHITE):
    d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=face, outline=BLACK, width=3)
    for k in range(12):
        a = math.radians(k * 30 - 90)
        d.line([cx + (r - 8) * math.cos(a), cy + (r - 8) * math.sin(a),
                cx + (r - 2) * math.cos(a), cy + (r - 2) * math.sin(a)], fill=BLACK, width=2)
    ha = math.radians((hour % 12 + minute / 60) * 30 - 90)
    ma = math.radians(minute * 6 - 90)
    d.line([cx, cy, cx + 0.5 * r * math.cos(ha), cy + 0.5 * r * math.sin(ha)], fill=BLACK, width=5)
    d.line([cx, cy, cx + 0.85 * r * math.cos(ma), cy + 0.85 * r * math.sin(ma)], fill=BLACK, width=3)
    d.ellipse([cx - 3, cy - 3, cx + 3, cy + 3], fill=BLACK)


def star(d, x, y, s=3):
    d.line([x - s, y, x + s, y], fill=WHITE, width=1)
    d.line([x, y - s, x, y + s], fill=WHITE, width=1)


# ------------------------------------------------------------------------------------------------ scenes
# Each returns (background colour, draw function, bbox). Candidates are written with the right one first.

def scene_beach(d):
    d.rectangle([0, 0, W, 120], fill=SKY)
    d.rectangle([0, 120, W, H], fill=SAND)
    sun(d, 215, 35)
    umbrella(d, 100, 70)
    d.rectangle([70, 150, 130, 158], fill=(60, 150, 220))  # a towel in the shade
    return box(64, 68, 138, 162)


def scene_rain(d):
    d.rectangle([0, 0, W, H], fill=(150, 155, 165))
    for cx in (40, 110, 180, 240):
        d.ellipse([cx - 40, 5, cx + 40, 45], fill=(95, 100, 110))
    for x in range(10, W, 18):
        for y in range(50, H, 30):
            d.line([x, y, x - 4, y + 10], fill=(60, 90, 200), width=2)
    d.rectangle([0, 172, W, H], fill=(80, 80, 90))
    umbrella(d, 128, 60, r=36, color=(30, 30, 30))
    person(d, 128, 108)
    return box(88, 56, 168, 172)


def scene_clock_three(d):
    d.rectangle([0, 0, W, H], fill=(225, 215, 195))
    clock(d, 128, 92, 62, 3, 0)
    return box(62, 26, 194, 158)


def scene_clock_half_past(d):
    d.rectangle([0, 0, W, H], fill=(200, 220, 200))
    d.rectangle([20, 150, 236, 160], fill=BROWN)  # a shelf
    clock(d, 128, 88, 56, 7, 30)
    return box(68, 28, 188, 148)


def scene_apples(d):
    d.rectangle([0, 0, W, H], fill=(245, 235, 215))
    d.rectangle([0, 140, W, H], fill=(170, 120, 70))  # table
    d.chord([58, 90, 198, 170], 0, 180, fill=(120, 80, 40))  # bowl
    for cx in (92, 128, 164):
        d.ellipse([cx - 16, 96, cx + 16, 128], fill=RED)
        d.line([cx, 96, cx + 3, 88], fill=BROWN, width=3)
    return box(56, 84, 200, 172)


def scene_traffic_red(d):
    d.rectangle([0, 0, W, H], fill=SKY)
    d.rectangle([0, 150, W, H], fill=(70, 70, 70))
    d.rectangle([124, 100, 132, 170], fill=(50, 50, 50))
    d.rectangle([108, 20, 148, 104], fill=(30, 30, 30))
    d.ellipse([116, 26, 140, 50], fill=(255, 30, 30))
    d.ellipse([116, 52, 140, 76], fill=(70, 60, 20))
    d.ellipse([116, 78, 140, 102], fill=(20, 60, 30))
    return box(104, 16, 152, 108)


def scene_snowman(d):
    d.rectangle([0, 0, W, H], fill=(190, 210, 230))
    d.rectangle([0, 150, W, H], fill=WHITE)
    for x, y in [(20, 20), (60, 50), (200, 30), (230, 80), (100, 15), (160, 60)]:
        d.ellipse([x - 2, y - 2, x + 2, y + 2], fill=WHITE)
    d.ellipse([98, 110, 158, 170], fill=WHITE, outline=GREY)
    d.ellipse([108, 70, 148, 112], fill=WHITE, outline=GREY)
    d.ellipse([116, 80, 121, 85], fill=BLACK)
    d.ellipse([135, 80, 140, 85], fill=BLACK)
    d.polygon([(128, 88), (128, 94), (146, 91)], fill=ORANGE)
    return box(94, 64, 162, 174)


def scene_birthday_cake(d):
    d.rectangle([0, 0, W, H], fill=(250, 220, 230))
    d.rectangle([0, 150, W, H], fill=(200, 170, 140))
    d.rectangle([68, 100, 188, 156], fill=(120, 70, 40))
    d.rectangle([68, 96, 188, 106], fill=(255, 240, 245))
    for x in (88, 108, 128, 148, 168):
        d.rectangle([x - 3, 70, x + 3, 96], fill=(100, 160, 230))
        d.ellipse([x - 4, 56, x + 4, 70], fill=ORANGE)
    return box(62, 50, 194, 160)


def scene_autumn_tree(d):
    d.rectangle([0, 0, W, H], fill=SKY)
    d.rectangle([0, 160, W, H], fill=(120, 150, 70))
    d.rectangle([118, 90, 138, 162], fill=BROWN)
    d.ellipse([70, 20, 186, 110], fill=(220, 110, 30))
    rng = random.Random("autumn-leaves")
    for _ in range(14):
        x, y = rng.randint(60, 200), rng.randint(115, 175)
        d.ellipse([x - 4, y - 3, x + 4, y + 3], fill=(200, 80, 20))
    return box(64, 14, 206, 182)


def scene_sailboat(d):
    d.rectangle([0, 0, W, 120], fill=SKY)
    d.rectangle([0, 120, W, H], fill=(40, 100, 180))
    for y in (135, 155, 175):
        for x in range(0, W, 32):
            d.arc([x, y, x + 16, y + 8], 180, 360, fill=WHITE, width=2)
    d.polygon([(90, 122), (170, 122), (155, 140), (105, 140)], fill=BROWN)
    d.line([128, 40, 128, 122], fill=BLACK, width=3)
    d.polygon([(130, 42), (130, 116), (172, 112)], fill=WHITE)  # the sail, bulging with wind
    for y in (50, 70, 90):
        d.line([20, y, 60, y], fill=WHITE, width=2)  # wind streaks
    return box(86, 36, 176, 144)


def scene_ball_edge(d):
    d.rectangle([0, 0, W, H], fill=(235, 230, 220))
    d.rectangle([30, 110, 170, 120], fill=BROWN)
    d.rectangle([40, 120, 50, 182], fill=BROWN)
    d.rectangle([150, 120, 160, 182], fill=BROWN)
    d.rectangle([0, 182, W, H], fill=(160, 130, 100))
    d.ellipse([152, 86, 176, 110], fill=BLUE)
    return box(146, 80, 182, 124)


def scene_chimney_smoke(d):
    d.rectangle([0, 0, W, H], fill=(170, 190, 210))
    d.rectangle([0, 160, W, H], fill=GRASS)
    d.rectangle([70, 100, 190, 162], fill=(200, 170, 130))
    d.polygon([(60, 100), (130, 50), (200, 100)], fill=(140, 50, 40))
    d.rectangle([160, 40, 176, 80], fill=(110, 60, 50))
    for x, y, r in [(170, 30, 8), (178, 18, 10), (190, 8, 12)]:
        d.ellipse([x - r, y - r, x + r, y + r], fill=(110, 110, 110))
    d.rectangle([120, 130, 140, 162], fill=(90, 60, 40))
    d.rectangle([85, 115, 105, 135], fill=(255, 220, 120))  # a lit window
    return box(154, 0, 206, 84)


def scene_thirsty_plant(d):
    d.rectangle([0, 0, W, H], fill=(240, 230, 200))
    sun(d, 40, 36)
    d.polygon([(100, 120), (156, 120), (148, 176), (108, 176)], fill=(180, 90, 50))
    d.rectangle([100, 116, 156, 124], fill=(160, 120, 80))
    for x in (110, 124, 140):
        d.line([x, 118, x + 4, 122], fill=(90, 60, 30), width=1)  # cracks in dry soil
    d.line([128, 118, 128, 80], fill=(120, 110, 40), width=3)
    d.line([128, 84, 112, 100], fill=(140, 110, 40), width=3)  # drooping leaves
    d.line([128, 84, 146, 102], fill=(140, 110, 40), width=3)
    d.line([128, 80, 118, 96], fill=(150, 120, 50), width=3)
    return box(96, 74, 160, 180)


def scene_night_moon(d):
    d.rectangle([0, 0, W, H], fill=NIGHT)
    d.rectangle([0, 160, W, H], fill=(20, 50, 30))
    d.ellipse([160, 20, 210, 70], fill=(245, 245, 210))
    d.ellipse([176, 14, 222, 62], fill=NIGHT)  # crescent
    for x, y in [(30, 30), (70, 60), (110, 25), (140, 90), (40, 110), (230, 110), (90, 130)]:
        star(d, x, y)
    return box(154, 12, 216, 76)


def scene_birds(d):
    d.rectangle([0, 0, W, H], fill=SKY)
    d.rectangle([0, 168, W, H], fill=GRASS)
    for x, y in [(60, 60), (90, 45), (120, 70), (150, 40), (180, 62)]:
        d.line([x - 10, y - 6, x, y], fill=BLACK, width=3)
        d.line([x, y, x + 10, y - 6], fill=BLACK, width=3)
    return box(44, 30, 196, 78)


def scene_flat_tyre(d):
    d.rectangle([0, 0, W, H], fill=SKY)
    d.rectangle([0, 150, W, H], fill=(70, 70, 70))
    d.rectangle([40, 100, 216, 140], fill=RED)
    d.polygon([(80, 100), (100, 72), (170, 72), (190, 100)], fill=RED)
    d.rectangle([108, 78, 160, 98], fill=(190, 220, 240))
    d.ellipse([58, 124, 94, 160], fill=(25, 25, 25))  # a round, healthy wheel
    d.ellipse([68, 134, 84, 150], fill=(160, 160, 160))
    d.ellipse([160, 138, 204, 158], fill=(25, 25, 25))  # a squashed, flat wheel
    d.ellipse([174, 143, 190, 153], fill=(160, 160, 160))
    return box(154, 130, 210, 162)


def scene_battery(d):
    d.rectangle([0, 0, W, H], fill=(230, 230, 235))
    d.rectangle([58, 56, 188, 136], outline=BLACK, width=5)
    d.rectangle([188, 80, 200, 112], fill=BLACK)
    d.rectangle([68, 66, 92, 126], fill=RED)  # one bar of four
    return box(50, 48, 206, 144)


def scene_melting_ice_cream(d):
    d.rectangle([0, 0, W, H], fill=(250, 240, 190))
    sun(d, 210, 40, r=22)
    d.polygon([(100, 90), (156, 90), (128, 176)], fill=(210, 160, 90))
    d.ellipse([96, 50, 160, 100], fill=(255, 200, 220))
    for x, y1 in [(106, 118), (150, 112), (124, 128)]:
        d.line([x, 94, x, y1], fill=(255, 190, 215), width=5)  # drips
        d.ellipse([x - 4, y1 - 2, x + 4, y1 + 6], fill=(255, 190, 215))
    d.ellipse([118, 180, 146, 188], fill=(255, 190, 215))  # a puddle below
    return box(90, 44, 166, 190)


def scene_lighthouse(d):
    d.rectangle([0, 0, W, H], fill=NIGHT)
    d.rectangle([0, 150, W, H], fill=(20, 40, 90))
    d.polygon([(40, 150), (70, 120), (120, 120), (140, 150)], fill=(60, 60, 60))
    d.polygon([(78, 120), (86, 40), (104, 40), (112, 120)], fill=WHITE)
    for y in (60, 90):
        d.rectangle([82, y, 108, y + 12], fill=RED)
    d.rectangle([84, 26, 106, 40], fill=YELLOW)
    d.polygon([(106, 30), (250, 10), (250, 50)], fill=(250, 240, 150))  # the beam
    d.polygon([(200, 160), (236, 160), (230, 170), (206, 170)], fill=(150, 120, 90))  # a small boat
    for x, y in [(20, 20), (50, 70), (160, 90), (220, 100)]:
        star(d, x, y)
    return box(72, 20, 118, 124)


def scene_odd_one_out(d):
    d.rectangle([0, 0, W, H], fill=WHITE)
    for x in (28, 78, 128):
        d.rectangle([x, 76, x + 36, 112], fill=GREEN)
    d.ellipse([178, 76, 214, 112], fill=RED)
    return box(172, 70, 220, 118)


# ------------------------------------------------------------------------------------------------ content

SCENES = [
    (scene_beach, "an open umbrella on the sand under a bright sun",
     ["It gives shade from the strong sunshine", "It is keeping off heavy rain", "It is for sale in a shop",
      "It is being used as a sail for a boat", "It was left behind after a snowstorm", "It hides a sleeping bear"],
     [("What is shining in the sky?", ["A bright sun", "A full moon", "Dark storm clouds", "A rainbow",
                                       "Fireworks", "A street lamp"]),
      ("What does an open umbrella do on a sunny beach?", ["It casts a patch of shade", "It makes the sand wet",
                                                            "It catches fish", "It cools the sea",
                                                            "It plays music", "It points to the north"])]),
    (scene_rain, "a person holding a dark umbrella while lines fall from grey clouds",
     ["The umbrella keeps the person dry in the rain", "The person is shading from a hot sun",
      "The person is about to fly away", "The umbrella is a walking stick today",
      "The person is selling umbrellas", "The umbrella is a prize from a contest"],
     [("What is falling from the clouds?", ["Rain", "Snowflakes", "Leaves", "Confetti", "Sand", "Feathers"]),
      ("What is the person holding above their head?", ["An umbrella", "A book", "A tray", "A cat", "A kite",
                                                        "A hat box"]),
      ("What happens to the rain that hits the umbrella?", ["It runs off and the person stays dry",
                                                             "It soaks through to the person",
                                                             "It turns into snow", "It bounces back into the clouds",
                                                             "It makes the umbrella heavier until it breaks",
                                                             "It freezes the handle"])]),
    (scene_clock_three, "a round clock with a short hand to the right and a long hand straight up",
     ["It is three o'clock", "It is nine o'clock", "It is half past six", "It is a quarter past twelve",
      "The clock has stopped at midnight", "It is five to four"],
     [("Where does the short hour hand point?", ["To the 3", "To the 9", "To the 6", "To the 12", "To the 1",
                                                 "To the 7"]),
      ("Where does the long minute hand point?", ["Straight up at the 12", "Straight down at the 6",
                                                  "Left at the 9", "Right at the 3", "At the 8", "At the 1"])]),
    (scene_clock_half_past, "a clock on a shelf with the long hand pointing straight down",
     ["It is half past seven", "It is exactly seven o'clock", "It is a quarter to seven", "It is twelve noon",
      "It is half past one", "It is ten past four"],
     [("Where does the long minute hand point?", ["Straight down at the 6", "Straight up at the 12",
                                                  "Right at the 3", "Left at the 9", "At the 10", "At the 2"]),
      ("What time in minutes does a minute hand at the 6 show?", ["Thirty minutes past the hour",
                                                                   "Six minutes past the hour",
                                                                   "Exactly on the hour", "Forty-five minutes",
                                                                   "Fifteen minutes", "Sixty minutes"]),
      ("Between which numbers is the short hour hand?", ["Between the 7 and the 8", "Between the 1 and the 2",
                                                         "Exactly at the 12", "Between the 4 and the 5",
                                                         "Between the 10 and the 11", "Exactly at the 3"])]),
    (scene_apples, "round red fruits in a brown bowl on a table",
     ["There are three apples, one each for three people", "There are five oranges for juice",
      "The bowl is empty", "There are two bananas going brown", "There is one large watermelon",
      "The fruits are plastic toys in a shop window"],
     [("What are the round red things in the bowl?", ["Apples", "Tomatoes on a vine", "Balloons", "Bananas",
                                                      "Oranges", "Stones"]),
      ("How many of them are in the bowl?", ["Three", "One", "Two", "Four", "Five", "Ten"]),
      ("If each person takes one, how many people can have one?", ["Three", "One", "Two", "Four", "Six",
                                                                   "Nobody"])]),
    (scene_traffic_red, "a traffic light with its top lamp lit red",
     ["Cars at this light should stop", "Cars may drive through quickly", "The light is broken and dark",
      "The road is closed for ever", "It is a lamp for reading", "The light is telling cars to reverse"],
     [("Which lamp on the traffic light is lit?", ["The top red lamp", "The middle yellow lamp",
                                                   "The bottom green lamp", "All three lamps", "No lamp",
                                                   "A blue lamp"]),
      ("What does a red traffic light tell drivers?", ["To stop", "To go", "To speed up", "To honk",
                                                       "To turn on the radio", "To park on the pavement"])]),
    (scene_snowman, "a figure of stacked white balls with a carrot nose on white ground",
     ["The weather here is cold", "It is a hot summer afternoon", "The figure is a real person in costume",
      "The scene is on a sandy beach", "The figure will walk away soon", "It is a cloud that fell down"],
     [("What is the figure made of?", ["Snow", "Sand", "Paper", "Stone", "Wood", "Ice cream"]),
      ("What colour is the ground?", ["White", "Green", "Yellow", "Brown", "Blue", "Red"]),
      ("What do snow and a snowman need to last?", ["Cold temperatures", "Hot sunshine", "Heavy rain",
                                                    "Loud music", "Strong light", "A warm room"])]),
    (scene_birthday_cake, "a cake topped with five lit candles",
     ["Someone is celebrating a birthday", "The cake is being baked in an oven", "There is a power cut",
      "The candles are for a church service", "The cake is a building model", "Someone is lighting a barbecue"],
     [("What is on top of the cake?", ["Candles", "Flowers", "Fruit", "Coins", "Toy cars", "Nothing"]),
      ("Are the candles burning?", ["Yes, each has a flame", "No, they are unlit", "Only one is lit",
                                    "They are melted away", "They are electric bulbs", "They are blown out"]),
      ("When do people usually put lit candles on a cake?", ["At a birthday", "At breakfast every day",
                                                             "When it rains", "When a car is washed",
                                                             "At a job interview", "When moving house"])]),
    (scene_autumn_tree, "a tree with orange leaves, and leaves lying on the ground",
     ["It is autumn and the leaves are falling", "It is spring and the tree is budding",
      "The tree is on fire", "Someone painted the tree orange", "It is winter and the tree is covered in snow",
      "The tree is made of plastic"],
     [("What colour are the tree's leaves?", ["Orange", "Bright green", "White", "Blue", "Pink", "Black"]),
      ("Where are some of the leaves?", ["On the ground under the tree", "In a box", "On the roof of a car",
                                         "Flying up into space", "In a river", "In a vase"])]),
    (scene_sailboat, "a boat with a white sail on waves, with streaks of wind",
     ["The wind is pushing the boat along", "The boat is parked in a garage", "The boat is sinking fast",
      "The sail is a bed sheet drying", "The boat is pulled by a horse", "The boat is frozen in ice"],
     [("What is attached to the boat's mast?", ["A white sail", "A flag of a country", "A bell", "A lamp",
                                                "A fishing net", "Nothing"]),
      ("What moves a sailing boat without an engine?", ["The wind in its sail", "A battery", "Petrol",
                                                         "Pedals", "Magnets", "Steam"])]),
    (scene_ball_edge, "a blue ball resting right at the end of a table",
     ["The ball could easily roll off and fall", "The ball is glued to the middle of the table",
      "The ball is floating in the air", "The ball is inside a drawer", "The ball is a lamp",
      "The ball is too heavy to move"],
     [("Where on the table is the ball?", ["At the very edge", "In the middle", "Under the table",
                                           "On a chair", "In a cup", "Hanging above it"]),
      ("What is beyond the table's edge?", ["Empty space above the floor", "Another table", "A wall",
                                            "A pillow", "A box", "Water"]),
      ("What would happen if the ball rolled a little further?", ["It would fall to the floor",
                                                                  "It would stop in mid-air",
                                                                  "It would roll uphill", "It would melt",
                                                                  "It would turn into a cube",
                                                                  "It would bounce to the ceiling"])]),
    (scene_chimney_smoke, "grey puffs rising from a house's chimney",
     ["Someone has lit a fire inside the house", "The house is being built right now",
      "The house is empty and abandoned", "The chimney is a rocket taking off", "It is snowing on the roof",
      "The grey puffs are birds"],
     [("What is coming out of the chimney?", ["Grey smoke", "Water", "Birds", "Flowers", "Sparks of gold",
                                              "Nothing"]),
      ("Where does smoke from a house chimney come from?", ["A fire in a fireplace or stove", "A bath",
                                                            "A fridge", "A television", "A bookshelf",
                                                            "A bed"]),
      ("Is a window of the house lit?", ["Yes, one window glows", "No, all windows are dark",
                                         "There are no windows", "The windows are broken",
                                         "The windows are painted black", "Only the door is lit"])]),
    (scene_thirsty_plant, "a potted plant with drooping brownish leaves in cracked soil",
     ["The plant has not been watered for a while", "The plant was just watered a lot",
      "The plant is made of metal", "The plant is growing very fast", "The plant is under water",
      "The plant is a new kind of tree"],
     [("How do the plant's leaves look?", ["Drooping and brownish", "Fresh and bright green",
                                           "Covered in flowers", "Frozen", "Wet and shiny", "Cut off"]),
      ("How does the soil in the pot look?", ["Dry and cracked", "Muddy and wet", "Covered in snow",
                                              "Full of water", "Golden", "Missing"]),
      ("What do drooping leaves and dry soil tell us?", ["The plant needs water", "The plant has too much water",
                                                         "The plant is asleep", "The plant is happy",
                                                         "The plant is new", "The plant wants music"])]),
    (scene_night_moon, "a thin moon and small stars in a dark sky",
     ["It is night-time", "It is the middle of a sunny day", "A solar eclipse at noon",
      "The picture shows the sea floor", "A lamp is shining in a room", "It is raining hard"],
     [("What is in the marked part of the sky?", ["A crescent moon", "The sun", "A plane", "A balloon",
                                                  "A bird", "A kite"]),
      ("What colour is the sky?", ["Dark blue, almost black", "Bright blue", "Orange", "Pink", "White",
                                   "Green"])]),
    (scene_birds, "five V-shaped birds flying near each other",
     ["A small flock of birds is flying together", "A single bird is sitting in a nest",
      "The shapes are letters of a word", "The birds are fish swimming", "The birds are falling from the sky",
      "They are kites tied to the ground"],
     [("How many birds are in the marked area?", ["Five", "One", "Two", "Three", "Seven", "Twelve"]),
      ("Where are the birds?", ["Up in the sky", "On the grass", "In a cage", "In the water", "On a roof",
                                "In a tree"]),
      ("Are the birds close to one another?", ["Yes, they fly in a loose group", "No, they are far apart",
                                               "They are stacked on top of each other", "Only two are close",
                                               "They are inside each other", "There are no birds"])]),
    (scene_flat_tyre, "a red car with one wheel squashed flat",
     ["The car should not be driven until the tyre is fixed", "The car is racing at top speed",
      "The car has brand-new tyres", "The car is floating on water", "The car is a toy in a box",
      "The car is being washed"],
     [("What is the large red object?", ["A car", "A house", "A boat", "A bus stop", "A sofa", "A tractor"]),
      ("How many wheels can be seen?", ["Two", "One", "Three", "Four", "Six", "None"]),
      ("How does the marked wheel look compared with the other?", ["Flattened and squashed",
                                                                   "Exactly the same and round",
                                                                   "Much bigger", "Painted gold",
                                                                   "Missing completely", "On fire"]),
      ("What happens if a car is driven on a flat tyre?", ["It can be damaged and is unsafe",
                                                           "It goes faster", "It uses less fuel",
                                                           "It becomes quieter", "Nothing at all",
                                                           "It starts to fly"])]),
    (scene_battery, "a battery outline with a single red bar inside",
     ["The device needs charging soon", "The battery is completely full", "The battery is overheating",
      "The battery is a flag", "The device was just charged overnight", "The battery is a door"],
     [("How many bars inside the battery are filled?", ["One", "Two", "Three", "Four", "Five", "None"]),
      ("What colour is the filled bar?", ["Red", "Green", "Blue", "Yellow", "White", "Purple"]),
      ("What does one red bar on a battery icon usually mean?", ["The charge is low", "The charge is full",
                                                                 "The battery is new", "The battery is wet",
                                                                 "The device is off", "The battery is free"])]),
    (scene_melting_ice_cream, "a pink ice cream cone with drips under a hot sun",
     ["The ice cream is melting in the heat", "The ice cream is frozen solid", "The cone is a party hat",
      "The ice cream was just taken out of a freezer in winter", "The drips are paint",
      "The ice cream is growing bigger"],
     [("What is on top of the cone?", ["A scoop of ice cream", "A candle", "A flower", "A ball of wool",
                                       "A tennis ball", "A hat"]),
      ("What is running down the cone?", ["Drips of melted ice cream", "Rain water", "Chocolate sprinkles",
                                          "Ink", "Honey from a bee", "Nothing"]),
      ("What is in the sky?", ["A hot sun", "A crescent moon", "Snow clouds", "Stars", "A rainbow",
                               "A plane"]),
      ("What does warm weather do to ice cream?", ["It makes it melt", "It makes it freeze harder",
                                                   "It makes it change flavour", "It makes it grow",
                                                   "It makes it glow", "Nothing"])]),
    (scene_lighthouse, "a tall striped tower sending a beam of light over dark water",
     ["It warns ships about the coast in the dark", "It is a chimney of a factory", "It is a rocket on a launch pad",
      "It is lighting up a football match", "It is a tower for storing grain", "It is switched off for the day"],
     [("What is the tall striped building?", ["A lighthouse", "A church", "A skyscraper", "A windmill",
                                              "A water tower", "A castle"]),
      ("What comes from the top of the building?", ["A beam of light", "Smoke", "Water", "Music", "Birds",
                                                    "Nothing"]),
      ("What time of day is it?", ["Night", "Noon", "Early morning sunshine", "Afternoon", "Dusk with a red sky",
                                   "It cannot be any time"]),
      ("What is a lighthouse's light used for?", ["Guiding ships safely at night", "Cooking", "Drying clothes",
                                                  "Scaring birds away", "Lighting a garden party",
                                                  "Growing plants"])]),
    (scene_odd_one_out, "a red circle at the end of a row of green squares",
     ["The marked shape is the odd one out in the row", "The marked shape is the same as the others",
      "The row has no shapes", "All shapes are red circles", "The marked shape is the biggest square",
      "The row is a traffic light"],
     [("What shape are the other items in the row?", ["Squares", "Circles", "Triangles", "Stars", "Hearts",
                                                      "Lines"]),
      ("What colour are the other items?", ["Green", "Red", "Blue", "Yellow", "Black", "Purple"]),
      ("How does the marked item differ from them?", ["It is a red circle, not a green square",
                                                      "It does not differ", "It is a bigger green square",
                                                      "It is a blue triangle", "It is missing",
                                                      "It is a green circle"])]),
]


def shuffled(candidates: list[str], seed: str) -> tuple[list[str], int]:
    """The 6 candidates in a deterministic order; returns them and the index of the right one (written first)."""
    assert len(candidates) == 6 and len(set(candidates)) == 6, candidates
    order = list(range(6))
    random.Random(seed).shuffle(order)
    return [candidates[i] for i in order], order.index(0)


def build() -> list[dict]:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    instances = []
    for idx, (draw, clue, inference, chain) in enumerate(SCENES):
        img = Image.new("RGB", (W, H), WHITE)
        bbox = draw(ImageDraw.Draw(img))
        name = f"{idx:03d}.png"
        img.save(OUT_DIR / name, optimize=False)
        cands, gt = shuffled(inference, f"cure-sample-{idx}-high")
        steps = []
        for k, (question, options) in enumerate(chain):
            opts, sgt = shuffled(options, f"cure-sample-{idx}-step{k + 1}")
            steps.append({"question": question, "candidate": opts, "gt": sgt})
        instances.append({
            "image": {"url": f"cure_sample/{name}", "width": W, "height": H},
            "bboxes": [bbox],
            "clue": clue,
            "inference": {"candidate": cands, "gt": gt},
            "cot_inference": {"total_step": len(steps), "chain": steps},
        })
    return instances


def main() -> None:
    instances = build()
    OUT_JSON.write_text(json.dumps(instances, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    lengths = Counter(len(i["cot_inference"]["chain"]) for i in instances)
    print(f"wrote {len(instances)} instances to {OUT_JSON} (chain lengths {dict(sorted(lengths.items()))})")


if __name__ == "__main__":
    main()
