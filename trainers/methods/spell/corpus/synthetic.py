"""A small corpus, generated offline, that exercises every stage of `build.py` for real.

`write_synthetic(folder, seed)` writes, in the shapes of the real sources:

* `web/ultra-fineweb.jsonl`: Ultra-FineWeb-style rows (`content`, `score`, `source`) in a seeded order:
  * `FAMILIES`: 22 families of 4-6 short documents (40-90 words of plain English), each family about one
    fictional entity on a topic of its own (a town, a bicycle maker, a botanist, a river, ...). Each
    document of a family gives different facts (names, years, numbers), so a question can need several
    of them. Clustering should give back exactly these families.
  * near-duplicates of 6 family documents (an exact copy, changed case and punctuation, a few words added
    or changed at the edges: what copies of one page look like on the web); deduplication removes them;
  * 5 documents that copy evaluation texts (two AIME problems as shipped in the package, three paragraphs
    of the long-context item in `eval/synthetic-eval.jsonl`) with small edits; decontamination removes
    them;
  * 6 documents the quality and length filter removes: 3 with a quality score below 1.0, 2 shorter than
    100 characters and 1 longer than 32,768 characters.
* `docmath/complong_test.jsonl` and `docmath/compshort_test.jsonl`: DocMath-Eval-style rows (`question_id`,
  `source`, `original_question_id`, `question`, `paragraphs` with tables as markdown, `table_evidence`,
  `paragraph_evidence`, `python_solution`, `ground_truth`) for 12 short financial reports of fictional
  companies, plus one report asked about twice (a second row with the same paragraphs: dedup), one report
  that the evaluation file quotes (decontamination) and one too long for the token budget (filter).
* `eval/synthetic-eval.jsonl`: an evaluation set in the harness's custom-benchmark format (`id`,
  `problem`, `answer`; loaded as `jsonl:PATH`) whose problems are SPELL prompts with documents.

`write_synthetic` returns what each stage must leave (`Expected`), for the tests.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path

WEB_FILE, EVAL_FILE = "web/ultra-fineweb.jsonl", "eval/synthetic-eval.jsonl"
DOCMATH_DIR, DOCMATH_SUBSETS = "docmath", ("complong", "compshort")

# One family = (entity, documents). Facts are consistent inside a family and never shared across them.
FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Velmora",
        (
            "Velmora is a small market town on the northern bank of the River Tesk. It was founded in 1612 "
            "by wool traders from the coast and received its town charter in 1689. About 14,200 people live "
            "in Velmora today. The town is known for its Thursday cattle market, which has been held every "
            "week since 1701.",
            "The Velmora bridge was built in 1843 to replace an old wooden ferry across the River Tesk. It "
            "has seven stone arches and is 212 metres long. The engineer who designed it was Tobias "
            "Wrenfield. Since 1998 the bridge has been closed to lorries and carries only cars, bicycles "
            "and people on foot.",
            "Velmora Grammar School opened in 1867 with forty pupils and two teachers. Its first head "
            "teacher was Eliza Hartcombe, who led the school for thirty-one years. The school moved to a "
            "larger building on Mill Lane in 1934. In 2019 it had 1,150 students, and its rowing club "
            "trains on the river below the town.",
            "For three centuries the economy of Velmora depended on wool. Since 1953 its largest employer "
            "has been the Tesk Valley Creamery, which makes butter and a blue cheese called Velmora Blue. "
            "The creamery employs about 640 people. Tourism is the second industry of the town, which has "
            "eleven hotels and guest houses.",
            "The centre of Velmora is its market square, where the town hall stands. The town hall was "
            "built in 1790 of grey stone, and the clock in its tower was added in 1846 to a design by "
            "Tobias Wrenfield, the engineer of the town bridge. The town council of fifteen members meets "
            "there on the first Monday of every month.",
            "Velmora railway station opened in 1852 on the line along the Tesk valley. The station building "
            "of yellow brick was restored in 2005 at a cost of 2.3 million pounds. A small museum on "
            "platform one shows the old signal box and a steam locomotive called Tesk Maiden, which "
            "pulled the first train into the town.",
        ),
    ),
    (
        "Brightwheel Cycles",
        (
            "Brightwheel Cycles is a bicycle maker founded in 1978 by the brothers Anton and Felix Dorsey in "
            "a garage in the city of Carnford. Their first model, the Brightwheel Sparrow, was a light "
            "steel touring bike. The company sold 300 bicycles in its first year and moved into a real "
            "factory in 1983.",
            "The Brightwheel factory in Carnford covers 18,000 square metres and employs 410 workers. It "
            "builds about 52,000 bicycles a year. Frames are welded on site, while wheels and gears come "
            "from suppliers. In 2016 the factory added a line for electric bicycles with batteries made "
            "in the same building.",
            "In 2021 Brightwheel Cycles reported sales of 61 million euros and a profit of 4.8 million "
            "euros. Electric bicycles made up 45 percent of its sales that year. The company is still "
            "owned by the Dorsey family; Felix Dorsey's daughter Ruth became chief executive in 2015.",
            "The best-known Brightwheel bicycle is the Kestrel Road, a carbon racing bike launched in 2009. "
            "A rider on a Kestrel Road won the national road championship in 2012. The bike weighs 7.1 "
            "kilograms and costs about 3,900 euros. Brightwheel stopped making steel frames altogether in "
            "2018.",
            "Brightwheel Cycles sponsors a youth cycling school in Carnford that has trained more than "
            "2,000 children since it opened in 1994. Each spring the company also organises the Dorsey "
            "Ride, a 90-kilometre charity ride. In 2023 the ride raised 210,000 euros for a children's "
            "hospital.",
        ),
    ),
    (
        "Ilsa Marrow",
        (
            "Ilsa Marrow was a botanist born in 1891 in the mountain village of Hollin Cross. As a child "
            "she pressed wild flowers in her father's bible. She studied natural science at Braxley "
            "University, where in 1914 she became one of the first women to earn a doctorate in botany "
            "there.",
            "Between 1921 and 1926 Ilsa Marrow led five expeditions to the highlands of the Sarrow "
            "plateau. She collected more than 6,000 plant specimens, and 43 of the species she found were "
            "new to science. A small blue gentian she discovered in 1923 was later named Gentiana marrowii "
            "in her honour.",
            "Ilsa Marrow's book The Flora of the High Plateau was published in 1931. It has 480 pages and "
            "112 colour plates, painted by her friend Agnes Tull. The book won the Linley Medal in 1932 "
            "and is still used by field botanists. A second edition appeared in 1958.",
            "In 1935 Ilsa Marrow became the director of the Braxley Botanic Garden, a post she held until "
            "1957. She built the garden's great glasshouse, opened in 1949, which holds about 2,500 "
            "tropical plants. Under her the garden's seed bank grew from 900 to 14,000 samples.",
            "Ilsa Marrow died in 1968 at the age of 77. She never married and left her notebooks, 61 "
            "volumes in all, to Braxley University. A walking trail on the Sarrow plateau, 23 kilometres "
            "long, was named the Marrow Way in 1971.",
        ),
    ),
    (
        "Harbury Gazette",
        (
            "The Harbury Gazette is a daily newspaper founded in 1868 by the printer Josiah Crane in the "
            "town of Harbury. The first issue had four pages and cost one penny. Crane wrote most of the "
            "early articles himself and printed 800 copies a day on a hand press in his shop.",
            "In 1921 the Harbury Gazette moved into a new office on Queen Street with a printing press that "
            "could print 20,000 copies an hour. The building has a clock tower with the newspaper's name in "
            "gold letters. The press was used until 1987, when printing moved to a plant outside the town.",
            "The most famous story in the Harbury Gazette was its report in 1954 on a fraud at the town "
            "council, written by the young reporter Margaret Olu. Three councillors lost their seats after "
            "the story. Olu became the newspaper's first woman editor in 1972 and held the post for "
            "eighteen years.",
            "Today the Harbury Gazette sells about 11,000 printed copies a day, down from 46,000 in 1980, "
            "but its website has about 300,000 readers a month. Since 2016 the newspaper has been owned by "
            "a local charity, the Crane Trust, and it employs 38 journalists.",
        ),
    ),
    (
        "Emberfield Folk Festival",
        (
            "The Emberfield Folk Festival is a music festival held every July on a farm outside the village "
            "of Emberfield. It was started in 1972 by the schoolteacher Rosalind Ferrow, who invited six "
            "local bands to play in her barn. About 200 people came to that first festival.",
            "Today the Emberfield Folk Festival lasts four days and sells around 18,000 tickets. A weekend "
            "ticket cost 145 pounds in 2023. The festival has five stages; the largest, called the Oak "
            "Stage, is a tent with room for 6,000 people."
            " Tickets usually sell out by March.",
            "Many famous folk musicians have played at Emberfield. The fiddler Colm Darragh appeared every "
            "year from 1979 to 2011, a record of 33 festivals in a row. In 1988 the band Whistling Hare "
            "recorded a live album there, which sold more than 100,000 copies.",
            "The Emberfield festival is run by a charity, the Emberfield Music Trust, which was formed in "
            "1990. The trust spends its profits on music lessons for children; in 2022 it paid for 1,300 "
            "lessons in local schools. About 700 volunteers help at the festival every year.",
            "In 2020 the Emberfield Folk Festival was cancelled for the first time in its history, and the "
            "trust streamed concerts online instead. The stream was watched by 240,000 people. The "
            "festival returned in 2021 with a smaller crowd of 9,000."
            " Tickets for 2021 cost half the usual price.",
            "The Emberfield festival is known for its green policy. Since 2015 all its power has come from "
            "solar panels and a wind turbine on the farm. Single-use plastic cups were banned in 2017, and "
            "festival-goers who arrive by bicycle get a free breakfast.",
        ),
    ),
    (
        "Northern Heron",
        (
            "The Northern Heron is a research ship built in 1999 at the Glasmoor shipyard. She is 89 metres "
            "long and can carry 34 scientists and 22 crew. The ship belongs to the Institute of Polar "
            "Studies and spends most of each year in cold northern seas.",
            "In 2008 the Northern Heron carried the expedition that mapped the Tarrow Trench, a deep valley "
            "in the sea floor. The trench was found to be 5,870 metres deep at its lowest point. The voyage "
            "lasted 71 days and was led by the geologist Mirela Voss.",
            "The Northern Heron has a helicopter deck and a moon pool, an opening in the hull through which "
            "instruments are lowered into the water. Her engines were replaced in 2014 with diesel-electric "
            "engines that cut fuel use by a fifth."
            " The ship's top speed is 14 knots.",
            "Since 2016 the Northern Heron has been captained by Oskar Lindqvist, who has sailed polar "
            "waters for 27 years. In 2019 the ship was trapped in sea ice for nine days before an "
            "icebreaker freed her. Nobody on board was hurt.",
        ),
    ),
    (
        "Ashcombe Public Library",
        (
            "The Ashcombe Public Library opened in 1887 with money given by the mill owner Samuel Prewitt. "
            "It began with 4,000 books on two floors of a red sandstone building on Church Street. Entry "
            "was free, which was unusual in Ashcombe at the time.",
            "The Ashcombe Public Library now holds about 210,000 books and 9,000 films and records. It "
            "lends around 350,000 items a year and has 28,000 registered members. A children's wing was "
            "added in 1965, designed by the architect Harriet Leng."
            " The library opens at nine every morning except Sunday.",
            "The most precious item in the Ashcombe library is the Prewitt Psalter, a hand-written book of "
            "psalms from about 1320. It is shown to the public once a year, on the library's birthday in "
            "May. The library bought it at auction in 1921 for 800 pounds.",
            "In 2012 the Ashcombe Public Library was threatened with closure when the council cut its "
            "budget. Local people formed the Friends of Ashcombe Library and raised 430,000 pounds in two "
            "years. Since then about 120 volunteers have helped to keep the library open six days a week.",
            "The Ashcombe library runs a writing prize for young people, the Prewitt Prize, founded in "
            "1977. Writers aged 12 to 18 may send in a short story of up to 2,000 words. The winner "
            "receives 500 pounds and sees the story printed in the local newspaper.",
        ),
    ),
    (
        "Redmarsh Rovers",
        (
            "Redmarsh Rovers is a football club founded in 1889 by workers at the Redmarsh glass works. The "
            "club's nickname is the Glassmen, and its colours are green and white stripes. The Rovers have "
            "played at Saltings Park since 1906."
            " The club's first captain was a glass blower named Albert Finch.",
            "Saltings Park, the home ground of Redmarsh Rovers, holds 11,400 spectators. Its record crowd of "
            "19,870 came to a cup match against Castlebury in 1953. The main stand burned down in 1974 and "
            "was rebuilt a year later with a roof of steel and glass.",
            "The greatest season in the history of Redmarsh Rovers was 1961, when the club won the national "
            "cup by beating Porthallow 2-1 in the final. Both goals were scored by the striker Danny Coyle, "
            "who scored 212 goals for the club in his career.",
            "Redmarsh Rovers have had nineteen managers. The longest serving was Walter Pryce, who was in "
            "charge from 1948 to 1967. The current manager, Sofia Ekwueme, was appointed in 2022 and is the "
            "first woman to manage the club."
            " Before joining the Rovers she coached the national under-21 team.",
            "The youth academy of Redmarsh Rovers opened in 1991 and has about 160 players aged 8 to 18. "
            "Eleven of its players have gone on to play for their country. The academy trains on four "
            "pitches at Marsh Lane, two kilometres from Saltings Park.",
            "In 2004 Redmarsh Rovers nearly went out of business with debts of 3.2 million pounds. A group "
            "of supporters bought the club for one pound and paid off the debts over ten years. The "
            "supporters' trust still owns 51 percent of the club's shares.",
        ),
    ),
    (
        "Mount Caldrith",
        (
            "Mount Caldrith is a volcano 3,212 metres high on the island of Korvan. It is the highest "
            "mountain on the island and is covered with snow from November to April. The first recorded "
            "climb to its summit was made in 1864 by the surveyor Piet Hallund.",
            "Mount Caldrith last erupted in 1928. Lava flowed down the western slope for eleven days and "
            "destroyed the village of Ostra, whose 600 people had been moved out in time. A new village "
            "was built six kilometres away and kept the old name.",
            "Hot springs rise at the foot of Mount Caldrith, heated by the volcano. The spa town of Vellis "
            "grew around them after 1890, and its largest bath house, the Caldrith Baths, opened in 1902. "
            "The water comes out of the ground at 48 degrees, and about 120,000 people bathe there each "
            "year.",
            "The slopes of Mount Caldrith are famous for coffee and apricots, which grow well in the rich "
            "volcanic soil. About 4,000 farmers work on the lower slopes. A narrow road with 48 bends leads "
            "from the town of Lenby to the crater rim.",
        ),
    ),
    (
        "Isle of Penhallow",
        (
            "The Isle of Penhallow lies 14 kilometres off the west coast and has an area of 62 square "
            "kilometres. About 2,300 people live there, most of them in the harbour town of Port Mellis. "
            "A ferry sails to the mainland three times a day and takes 50 minutes.",
            "The Isle of Penhallow had a tin mine at Wheal Tor from 1790 to 1908. At its peak in 1860 the "
            "mine employed 350 men and boys, and the ore was shipped from Port Mellis to the mainland. The "
            "engine house and its tall chimney still stand and are now a small mining museum.",
            "The lighthouse on Penhallow Point was built in 1831 and is 37 metres tall. Its light can be "
            "seen 22 nautical miles away. The last lighthouse keeper, Morwen Tregear, left in 1989 when "
            "the light became automatic."
            " Visitors may climb its 152 steps in summer.",
            "Fishing was the main trade of the Isle of Penhallow until the 1970s. Today most islanders work "
            "in tourism, and the island welcomes about 95,000 visitors a year. Penhallow crab is still "
            "caught by nine boats and sold in the Port Mellis market.",
            "The Isle of Penhallow got its first electricity in 1948 from a diesel generator. Since 2020 "
            "it has been powered mostly by three wind turbines and a battery store. The island's small "
            "school has 140 pupils, and older children board on the mainland.",
        ),
    ),
    (
        "Kestrel Dynamics",
        (
            "Kestrel Dynamics is a maker of wind turbines founded in 2003 by the engineer Yusuf Adeyemi in "
            "the port city of Harlow Bay. Its first turbine produced 850 kilowatts. The company now builds "
            "turbines for the sea that produce up to 12 megawatts each.",
            "Kestrel Dynamics has three factories and employs about 5,600 people. Its largest factory, at "
            "Harlow Bay, makes turbine blades up to 107 metres long. Blades leave the factory on special "
            "ships, because they are too long to move by road."
            " Each blade weighs about 55 tonnes.",
            "In 2022 Kestrel Dynamics had revenue of 3.1 billion dollars and installed 640 turbines. Its "
            "biggest order came from the Greymoor offshore wind farm, which will have 190 Kestrel turbines "
            "when it is finished in 2027."
            " The wind farm lies 40 kilometres off the coast of Harlow Bay.",
            "Kestrel Dynamics spends about 6 percent of its revenue on research. In 2019 it opened a test "
            "centre where a full blade can be bent ten million times to check its strength. The centre "
            "cost 85 million dollars."
            " About 700 engineers work in its research teams.",
            "Yusuf Adeyemi led Kestrel Dynamics until 2020, when he handed over to Clara Mendes, the former "
            "head of its blade factory. Adeyemi still sits on the board and owns 9 percent of the company. "
            "He was born in 1961 and studied engineering at Harlow Bay Polytechnic.",
            "Kestrel Dynamics recycles old turbine blades, which are hard to break down. Since 2021 its "
            "plant at Harlow Bay has ground up about 4,000 tonnes of old blades a year and turned them into "
            "panels for building bridges and bus shelters.",
        ),
    ),
    (
        "Marta Quillon",
        (
            "Marta Quillon is a painter born in 1949 in the seaside town of Carrigmore. Her father mended "
            "fishing nets, and the harbour appears in many of her early pictures. She trained at the "
            "Lindell School of Art from 1967 to 1971.",
            "Marta Quillon's best-known painting is Blue Nets at Evening, finished in 1978. The canvas is "
            "two metres wide and shows women mending nets on the harbour wall. It was bought by the "
            "National Gallery of Westmarch in 1980 for 12,000 pounds.",
            "In the 1990s Marta Quillon turned from harbours to large paintings of empty rooms filled with "
            "light. Her series Forty Windows, made between 1992 and 1997, has exactly forty paintings. "
            "They were shown together for the first time in 1998."
            " Each painting is named after the house where the window was found.",
            "Marta Quillon has won several prizes. In 1985 she received the Aldmere Prize for painting, and "
            "in 2009 she became the first woman to win the Gold Medal of the Royal Painters' Society. She "
            "taught painting at the Lindell School of Art for twenty years.",
            "A museum devoted to Marta Quillon opened in Carrigmore in 2015, in a former net loft on the "
            "harbour. It shows 64 of her paintings and her old studio. About 30,000 people visit the "
            "museum each year."
            " The entry fee is eight pounds, and children go in free.",
        ),
    ),
    (
        "Lake Myrren",
        (
            "Lake Myrren is a lake 19 kilometres long and 3 kilometres wide in a valley carved by glaciers. "
            "At its deepest it reaches 118 metres. The lake is fed by the streams of the Aran Fells and "
            "drains north into the river Caddow.",
            "The water of Lake Myrren is very clean and cold, staying below 12 degrees even in summer. A "
            "rare fish called the Myrren char lives only in this lake. Its numbers fell to about 2,000 in "
            "1990 but have risen to about 15,000 since fishing for it was banned.",
            "A steamer called the Lady of Myrren has carried passengers on the lake since 1894. She sails "
            "between the villages of Westerby and Coldharbour from April to October. The trip takes 95 "
            "minutes and passes the ruined castle on Gull Island.",
            "Lake Myrren froze from shore to shore in the winter of 1963, the last time this happened. "
            "People skated across it for six weeks, and a horse and cart drove over the ice from Westerby "
            "to Coldharbour. The ice was 41 centimetres thick.",
        ),
    ),
    (
        "Pixelgrove",
        (
            "Pixelgrove is a video game studio founded in 2011 by three university friends, Nia Osei, Tom "
            "Hardacre and Lena Vogt, in a small flat in the city of Brenwick. Their first game, a puzzle "
            "game for phones called Tilt Garden, was made in eight months.",
            "Tilt Garden, Pixelgrove's first game, was released in 2012 and was downloaded 14 million "
            "times. Players roll a marble through gardens by tilting the phone. The game earned the studio "
            "enough money to hire its first ten employees."
            " A sequel, Tilt Garden 2, followed in 2014.",
            "Pixelgrove's largest game is Ironbark, an adventure game set in a forest of giant trees, "
            "released in 2019. It took four years and 85 people to make. Ironbark sold 2.6 million copies "
            "in its first year and won the award for best game design at the Brenwick Games Awards.",
            "In 2021 Pixelgrove was bought by the publisher Halcyon Interactive for 310 million dollars. "
            "The founders stayed on, and Nia Osei remains head of the studio. Pixelgrove now has about 230 "
            "employees in offices in Brenwick and Lisbon."
            " The Lisbon office opened in 2022.",
            "Pixelgrove is known for letting its staff work four days a week, a policy it started in 2018. "
            "The studio says the change did not slow its games down. Every year it also holds a game jam "
            "in which staff make small games in 48 hours.",
            "Pixelgrove's next game, Salt and Sail, is a game about trading ships in the 1700s. It was first "
            "shown in 2024 and will be released on computers and consoles. The music is written by the "
            "composer Ade Mensah, who also scored Ironbark.",
        ),
    ),
    (
        "Orlen Museum of Clocks",
        (
            "The Orlen Museum of Clocks is a museum in the old town of Orlen that shows the history of "
            "measuring time. It opened in 1936 in the former house of the clockmaker Johann Bessel, and it "
            "holds about 3,400 clocks and watches.",
            "The oldest object in the Orlen Museum of Clocks is an iron tower clock made in about 1410 for "
            "the church of Saint Vitus. It has only an hour hand and was driven by stones hung on ropes. "
            "The clock still works and is wound by hand every Monday.",
            "The most famous piece in the Orlen clock museum is the Bessel Astronomical Clock, finished in "
            "1771 after nineteen years of work. It shows the time, the date, the phases of the moon and the "
            "positions of six planets. It has 1,630 moving parts.",
            "Every hour the Orlen Museum of Clocks is filled with the sound of hundreds of clocks striking "
            "together. The museum has a workshop where two clockmakers repair the collection. About 85,000 "
            "people visited the museum in 2023."
            " The museum is closed on Mondays.",
            "In 1944 the collection of the Orlen Museum of Clocks was hidden in a salt mine to keep it safe "
            "during the war. Only three clocks were lost. The museum reopened in 1947, and a new wing for "
            "wrist watches was added in 2001.",
        ),
    ),
    (
        "Kessingly Wildlife Reserve",
        (
            "Kessingly Wildlife Reserve is a protected area of wetland and woodland covering 2,400 hectares. "
            "It was created in 1972 on land that had been drained for farming a century earlier. The reserve "
            "is managed by the Kessingly Wetland Trust."
            " The trust has 18 paid staff and about 250 volunteers.",
            "More than 230 kinds of birds have been seen at Kessingly Wildlife Reserve. The most famous are "
            "the common cranes, which returned to breed in 2002 after an absence of 400 years. In 2023 "
            "there were 36 breeding pairs of cranes in the reserve.",
            "Kessingly Wildlife Reserve has eleven bird hides and 32 kilometres of footpaths. The visitor "
            "centre, built of timber and opened in 2010, receives about 150,000 visitors a year. Entry is "
            "free, but parking costs four pounds."
            " Dogs are allowed only on the outer footpaths.",
            "To restore the wetland, the Kessingly Wetland Trust blocked old drains and raised the water "
            "level by half a metre between 1995 and 2005. Beavers were brought to the reserve in 2019 and "
            "have since built nine dams."
            " Otters have also been seen in the reserve since 2015.",
        ),
    ),
    (
        "Carrow Peak Observatory",
        (
            "Carrow Peak Observatory is an astronomical observatory on the summit of Carrow Peak, 2,750 "
            "metres above sea level. It was built in 1958 because the air there is dry and the sky is very "
            "dark. The observatory is run by the University of Altmere.",
            "The largest telescope at Carrow Peak Observatory has a mirror 4.2 metres across. It was "
            "installed in 1987 and upgraded in 2015 with a camera of 400 million pixels. The telescope "
            "weighs 310 tonnes and turns inside a dome 30 metres wide.",
            "In 1994 astronomers at Carrow Peak Observatory discovered a comet that now bears the name "
            "Carrow-Ilves, after the observatory and the astronomer Kaja Ilves. The comet returns every 71 "
            "years and will next be seen in 2065."
            " Kaja Ilves spotted it on her third night at the telescope.",
            "About 60 people work at Carrow Peak Observatory, including 22 astronomers. They live in a "
            "lodge below the summit during their shifts, which last eight days. Snow often closes the road "
            "to the summit for weeks in winter."
            " Supplies are brought up by a tracked vehicle when the road is closed.",
            "Carrow Peak Observatory opens to the public on summer Saturdays, when visitors can look "
            "through a small 60-centimetre telescope. In 2005 the area around the peak was declared a "
            "dark sky park, and street lights in nearby villages were changed to reduce glare.",
            "The first director of Carrow Peak Observatory was Henrik Sollberg, who led it from 1958 to "
            "1979. He measured the distance to more than 300 nearby stars. The observatory's library and "
            "guest house are named after him."
            " Sollberg was born in 1912 and died in 1990.",
        ),
    ),
    (
        "Dunmore Hill Vineyard",
        (
            "Dunmore Hill Vineyard is a wine estate planted in 1986 by the former teacher Grace Ellery on a "
            "south-facing slope above the river Wend. It started with 3,000 vines and now has 41,000 vines "
            "on 14 hectares."
            " Grace Ellery had taught chemistry for twenty years before she planted the vines.",
            "Dunmore Hill Vineyard grows mainly two grapes, Pinot Noir and Chardonnay, which it uses for "
            "sparkling wine. The wine rests for at least three years in chalk cellars dug into the hill. "
            "The estate makes about 90,000 bottles a year."
            " The grapes are picked by hand in late September.",
            "In 2010 a sparkling wine from Dunmore Hill Vineyard beat many French wines to win the gold "
            "medal at the International Wine Contest in Bremont. After the win the estate's sales "
            "doubled in two years."
            " The winning wine was the Dunmore Hill Brut of 2005.",
            "Grace Ellery's son Daniel took over Dunmore Hill Vineyard in 2014. He stopped using chemical "
            "weed killers and keeps 200 sheep that graze between the vines in winter. A late frost in April "
            "2017 destroyed nearly half of that year's crop.",
            "Dunmore Hill Vineyard welcomes about 25,000 visitors a year for tours and tastings. A tour "
            "costs 22 pounds and includes three glasses of wine. The estate opened a restaurant in a "
            "converted barn in 2019."
            " The restaurant seats 60 guests.",
        ),
    ),
    (
        "Greywater Chess Open",
        (
            "The Greywater Chess Open is a chess tournament held every August in the town of Greywater. It "
            "was first played in 1959 with 24 players in the back room of the Anchor Hotel. Today about 450 "
            "players from more than 40 countries take part.",
            "The Greywater Chess Open is played over nine rounds, one round a day. Players of every "
            "strength play in the same event. The winner receives 8,000 pounds and a trophy in the shape "
            "of a silver rook."
            " Each player has 90 minutes for the whole game.",
            "The youngest winner of the Greywater Chess Open was Anika Rao, who won in 2016 at the age of "
            "15. The player with the most wins is Viktor Halas, who won the tournament six times between "
            "1971 and 1986."
            " Anika Rao later became a grandmaster in 2019.",
            "Since 1998 the Greywater Chess Open has been held in the Greywater Assembly Rooms, a hall built "
            "in 1820. Games from the top twenty boards are shown live on the internet, and in 2023 about "
            "310,000 people followed them online."
            " Entry to watch the games in the hall is free.",
        ),
    ),
    (
        "SkyLark Regional Airways",
        (
            "SkyLark Regional Airways is a small airline founded in 1995 that flies between islands and "
            "small towns. Its base is Halden Airport. The airline was started by the pilot Ingrid Solberg "
            "with two second-hand planes of 19 seats each."
            " Her first route linked Halden with the island of Vesk.",
            "SkyLark Regional Airways now has a fleet of 23 propeller planes and flies to 31 destinations. "
            "The shortest route, from Halden to the island of Vesk, takes just eleven minutes. In 2023 the "
            "airline carried 1.4 million passengers."
            " Its busiest route is from Halden to the town of Brekka.",
            "SkyLark Regional Airways employs 780 people, including 190 pilots. Its pilots train in a flight "
            "simulator at Halden Airport that the airline bought in 2012 for 9 million euros. New pilots "
            "must fly 500 hours with SkyLark before they may become captains.",
            "In 2019 SkyLark Regional Airways ordered eight electric planes with nine seats each for its "
            "short island routes. The first of them is due to carry passengers in 2026. The airline hopes "
            "to cut its fuel use by a third by 2030.",
            "Bad weather is the main problem for SkyLark Regional Airways. In winter strong winds often "
            "cancel flights to the islands; in 2022, 6 percent of its flights were cancelled. The airline "
            "keeps two spare planes at Halden for such days."
            " Flights in summer are rarely cancelled.",
            "SkyLark Regional Airways is owned by the regional government, which bought it from Ingrid "
            "Solberg in 2008 for 40 million euros. The government pays the airline to keep flying to "
            "small islands where few people travel."
            " Ingrid Solberg retired from flying in 2010.",
        ),
    ),
    (
        "St Aldric Hospital",
        (
            "St Aldric Hospital is a hospital in the city of Morlake founded in 1823 by a group of "
            "merchants. It began with 30 beds in a converted warehouse by the docks. Today it has 920 beds "
            "and is the largest hospital in the county.",
            "St Aldric Hospital employs about 6,100 people, including 850 doctors and 2,400 nurses. Its "
            "emergency department treats about 110,000 patients a year. A helicopter landing pad was built "
            "on the roof of the main building in 2011."
            " The hospital has 14 operating theatres.",
            "The children's wing of St Aldric Hospital opened in 1974 and was paid for by a public appeal "
            "that raised 2 million pounds. The wing has 140 beds and a school where long-stay patients "
            "can keep up with their lessons."
            " Families may stay in a guest house next to the wing.",
            "In 1952 a surgeon at St Aldric Hospital, Dr Nadia Kerrigan, performed one of the first heart "
            "valve operations in the country. The hospital's heart centre, opened in 1990, is named after "
            "her and carries out about 1,200 operations a year.",
            "St Aldric Hospital trains doctors together with Morlake University. About 300 medical "
            "students study there each year. The hospital's old chapel, built in 1848, is now a museum of "
            "medicine with 5,000 objects."
            " The museum is open on weekday afternoons.",
        ),
    ),
    (
        "Thornvale Marathon",
        (
            "The Thornvale Marathon is a running race of 42.2 kilometres held every April in the city of "
            "Thornvale. It was first run in 1981 by 640 runners. In 2023 about 21,000 runners finished the "
            "race."
            " The race was founded by the local running club, the Thornvale Harriers.",
            "The course of the Thornvale Marathon starts at Victoria Park, crosses the river Lune twice and "
            "finishes in front of the city hall. It is flat, which makes it one of the fastest marathons "
            "in the country."
            " The course passes the old cathedral at the 30-kilometre mark.",
            "The men's record for the Thornvale Marathon is 2 hours 6 minutes and 41 seconds, set by Daniel "
            "Kiprono in 2019. The women's record is 2 hours 21 minutes and 5 seconds, set by Hanna "
            "Lindgren in 2022."
            " Both records were set on cool, windless mornings.",
            "Runners in the Thornvale Marathon raised 14 million pounds for charities in 2023. The race "
            "needs about 3,500 volunteers, who hand out 200,000 bottles of water along the course."
            " Each finisher receives a medal made of recycled bronze. The race also has a wheelchair"
            " category, first held in 1986.",
        ),
    ),
)


# --- planted documents the pipeline must remove ------------------------------------------------------

# (family index, document index, how it was copied): what several copies of one page look like
NEAR_DUPLICATES = (
    (0, 1, "exact"),
    (3, 1, "case_and_punctuation"),
    (7, 2, "suffix"),
    (10, 0, "prefix"),
    (13, 2, "last_words"),
    (19, 1, "case_and_punctuation"),
)

LOW_SCORE = (  # quality score below 1.0: removed however good the text looks
    (
        "BEST deals on cheap flights!!! Click now to win a free holiday, limited offer, hurry up and "
        "register your email today to get the bonus code and 50 percent off every booking this week only.",
        0.12,
    ),
    (
        "the weather was ok today i went to the shop and bought some things then i came home and watched "
        "tv for a while and then i went to bed because i was tired after the long day at work.",
        0.47,
    ),
    (
        "The Calloway Choir was founded in 1950 and sings in the chapel of Calloway College every Sunday "
        "evening during term. The choir has 24 singers and made its first recording in 1968.",
        0.98,
    ),
)
TOO_SHORT = ("Home | About us | Contact", "Subscribe to our newsletter for weekly updates.")
TOO_LONG_SENTENCE = "Minutes of the parish meeting: the committee agreed to meet again next month. "


def _near_copy(text: str, how: str) -> str:
    if how == "exact":
        return text
    if how == "case_and_punctuation":  # what normalisation undoes: case, commas, spacing
        return text.upper().replace(", ", " ").replace(". ", ".  ")
    if how == "suffix":
        return text + " Share this page."
    if how == "prefix":
        return "Company profile: " + text
    if how == "last_words":  # the last sentence's final words changed
        body, _, _ = text.rstrip(".").rpartition(" ")
        return body + " altogether. Updated yearly."
    raise ValueError(how)


# --- the evaluation set and the web pages that copy it ----------------------------------------------

EVAL_PASSAGES = (
    "The Quorra Canal was dug between 1791 and 1803 to link the coal mines of Abermold with the sea. It is "
    "54 kilometres long and has 38 locks, and at its highest point it crosses the Tallis valley on an "
    "aqueduct of nineteen arches. Its chief engineer was Bartholomew Keane.",
    "Bartholomew Keane was born in 1760 in a farming family and taught himself mathematics from borrowed "
    "books. After the Quorra Canal he built harbours at Penmarr and Selby Cove. He died in 1831 and is "
    "buried beside the canal at Tallis Lock.",
    "Traffic on the Quorra Canal reached its peak in 1846, when barges carried 740,000 tonnes of coal. The "
    "railway that opened beside it in 1858 took most of the trade away, and the last coal barge passed "
    "through the locks in 1921.",
    "Since 1985 volunteers of the Quorra Canal Society have restored 31 of the 38 locks. Narrow boats can "
    "now travel 40 kilometres from the sea to the Tallis aqueduct, and about 12,000 boats use the canal "
    "each summer.",
)
# (evaluation passage index, how the web page copied it)
EVAL_COPIES = ((0, "case_and_punctuation"), (1, "prefix"), (2, "suffix"))
AIME_COPIES = (("aime24", "60"), ("aime25", "I-3"))  # benchmark, item id: pages quoting these problems


def _aime_problem(benchmark: str, item_id: str) -> str:
    """The problem as shipped in the package (the copy decontamination reads in the synthetic build)."""
    from benchmarks import get_benchmark
    from benchmarks.base import PACKAGED_DIR

    items = {item.id: item for item in get_benchmark(benchmark).load(PACKAGED_DIR).items}
    return items[item_id].problem


# --- DocMath-style reports ----------------------------------------------------------------------------

COMPANIES = (
    ("Halvard Logistics", "freight and warehousing", "Rotterham", ("Road freight", "Warehousing")),
    ("Brisa Foods", "packaged food", "Valmont", ("Snacks", "Frozen meals")),
    ("Corvid Semiconductors", "chip design", "Ostfield", ("Sensors", "Power chips")),
    ("Larkspur Hotels", "hotel", "Sandmere", ("Rooms", "Food and drink")),
    ("Tamsin Pharma", "generic medicines", "Caldwell", ("Tablets", "Injections")),
    ("Norrland Timber", "forestry and sawmill", "Ekby", ("Sawn timber", "Wood pellets")),
    ("Quayside Retail", "clothing retail", "Portwell", ("Stores", "Online")),
    ("Aster Water", "water utility", "Fenbridge", ("Households", "Businesses")),
    ("Mireval Mining", "copper mining", "Kessock", ("Copper", "Gold by-product")),
    ("Orison Software", "accounting software", "Linfield", ("Subscriptions", "Consulting")),
    ("Pellucid Glass", "glass packaging", "Marwick", ("Bottles", "Jars")),
    ("Juniper Telecom", "mobile network", "Easthaven", ("Mobile plans", "Broadband")),
    ("Saltmarsh Shipping", "container shipping", "Grimsholt", ("Container freight", "Port services")),
    ("Vantor Motors", "electric bus", "Dalby", ("Buses", "Service contracts")),
    ("Westerly Energy", "gas and power", "Brantham", ("Electricity", "Gas")),
)
INTRO = (
    "{name} is a {industry} company based in {city}. This annual report covers fiscal year {year}, which "
    "ended on December 31, {year}. Amounts are in thousands of US dollars unless stated otherwise.",
    "Founded in {founded}, {name} operates in the {industry} business from its head office in {city}. The "
    "figures below are for the fiscal year ended December 31, {year}, in thousands of US dollars.",
)
GROWTH = (
    "Total revenue went from {total_prev} in {prev} to {total} in {year}. {seg0} revenue changed by {g0} "
    "and {seg1} revenue by {g1}. Gross margin was {margin}% in {year}.",
    "In {year} revenue reached {total}, compared with {total_prev} a year earlier. The change in the "
    "{seg0} segment was {g0} and in the {seg1} segment {g1}. The gross margin for the year was {margin}%.",
)
PEOPLE = (
    "At the end of {year} {name} had {staff} employees. It paid a dividend of ${dividend} per share on "
    "{shares} million shares and ended the year with long-term debt of {debt}.",
    "{name} employed {staff} people at December 31, {year}. Long-term debt stood at {debt}. The board "
    "paid ${dividend} per share in dividends; {shares} million shares were outstanding.",
)


def _report(rng: random.Random, company: tuple, year: int, extra_years: int = 0) -> list[str]:
    """The paragraphs of one short financial report: text and markdown tables with its numbers."""
    name, industry, city, segments = company
    prev = year - 1
    rev = [rng.randrange(8_000, 60_000) for _ in segments]
    rev_prev = [int(r * rng.uniform(0.8, 1.1)) for r in rev]
    shares = {"Cost of sales": (0.5, 0.75), "Selling": (0.05, 0.12), "Administration": (0.04, 0.1)}
    costs = {k: int(sum(rev) * rng.uniform(*share)) for k, share in shares.items()}
    costs_prev = {k: int(v * rng.uniform(0.85, 1.1)) for k, v in costs.items()}
    fields = {
        "name": name,
        "industry": industry,
        "city": city,
        "year": year,
        "prev": prev,
        "founded": rng.randrange(1950, 2005),
        "seg0": segments[0],
        "seg1": segments[1],
        "total": f"{sum(rev):,}",
        "total_prev": f"{sum(rev_prev):,}",
        "g0": f"{rev[0] - rev_prev[0]:,}",
        "g1": f"{rev[1] - rev_prev[1]:,}",
        "margin": round(100 * (1 - costs["Cost of sales"] / sum(rev)), 1),
        "staff": f"{rng.randrange(300, 9_000):,}",
        "dividend": f"{rng.randrange(10, 250) / 100:.2f}",
        "shares": rng.randrange(20, 400),
        "debt": f"{rng.randrange(2_000, 40_000):,}",
    }
    revenue = [f"| Segment | {year} | {prev} |", "| --- | --- | --- |"]
    revenue += [f"| {s} | {r:,} | {p:,} |" for s, r, p in zip(segments, rev, rev_prev, strict=True)]
    revenue.append(f"| Total revenue | {sum(rev):,} | {sum(rev_prev):,} |")
    expenses = [f"| Expense | {year} | {prev} |", "| --- | --- | --- |"]
    expenses += [f"| {k} | {v:,} | {costs_prev[k]:,} |" for k, v in costs.items()]
    paragraphs = [
        rng.choice(INTRO).format(**fields),
        "\n".join(revenue),
        rng.choice(GROWTH).format(**fields),
        "\n".join(expenses),
        rng.choice(PEOPLE).format(**fields),
    ]
    for back in range(1, extra_years + 1):  # older years, in the long reports DocMath also has
        rows = [f"| Segment | {year - back} |", "| --- | --- |"]
        rows += [f"| {s} | {int(r * rng.uniform(0.6, 1.0)):,} |" for s, r in zip(segments, rev, strict=True)]
        paragraphs.append(f"Revenue by segment for fiscal {year - back}:\n" + "\n".join(rows))
        paragraphs.append(
            f"In fiscal {year - back} {name} opened {rng.randrange(2, 9)} new sites and its staff numbered "
            f"{rng.randrange(300, 9_000):,}; capital spending was {rng.randrange(500, 9_000):,}."
        )
    return paragraphs


def _docmath_row(report_id: str, paragraphs: list[str], company: str, year: int, n: int) -> dict:
    """A row shaped like yale-nlp/DocMath-Eval's (its test split hides the solution and the answer)."""
    return {
        "question_id": f"synthetic-{report_id}-q{n}",
        "source": "synthetic",
        "original_question_id": f"{report_id}-q{n}",
        "question": f"By what percentage did total revenue of {company} change in fiscal {year}?",
        "paragraphs": paragraphs,
        "table_evidence": [1],
        "paragraph_evidence": [0, 2],
        "python_solution": None,
        "ground_truth": None,
    }


# --- writing ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """What each stage must leave of the synthetic corpus (the builder's counts must equal these)."""

    web_read: int
    web_filtered: int  # after the quality/length filter
    web_deduplicated: int
    web_decontaminated: int
    families: tuple[tuple[str, ...], ...]  # the documents each cluster should hold
    docmath_read: int
    docmath_filtered: int  # after the token budget
    docmath_deduplicated: int
    docmath_decontaminated: int


def write_synthetic(folder: str | Path, seed: int = 0) -> Expected:
    """Write the synthetic sources under FOLDER (WEB_FILE, DOCMATH_DIR/*_test.jsonl, EVAL_FILE); the same
    seed gives the same bytes."""
    folder = Path(folder)
    rng = random.Random(seed)
    rows: list[dict] = []
    for _entity, documents in FAMILIES:
        rows += [{"content": d, "score": 1.0, "source": "synthetic"} for d in documents]
    planted = [_near_copy(FAMILIES[f][1][d], how) for f, d, how in NEAR_DUPLICATES]
    planted += [_near_copy(EVAL_PASSAGES[p], how) for p, how in EVAL_COPIES]
    planted += ["Math club puzzle of the week: " + _aime_problem(b, i) for b, i in AIME_COPIES]
    rows += [{"content": t, "score": 1.0, "source": "synthetic"} for t in planted]
    rows += [{"content": t, "score": s, "source": "synthetic"} for t, s in LOW_SCORE]
    rows += [{"content": t, "score": 1.0, "source": "synthetic"} for t in TOO_SHORT]
    long_text = TOO_LONG_SENTENCE * (32_768 // len(TOO_LONG_SENTENCE) + 1)
    rows.append({"content": long_text, "score": 1.0, "source": "synthetic"})
    # the originals come first, so deduplication keeps them and drops the copies
    originals = sum(len(d) for _, d in FAMILIES)
    head, tail = rows[:originals], rows[originals:]
    rng.shuffle(head)
    rng.shuffle(tail)
    _write_jsonl(folder / WEB_FILE, head + tail)

    reports = {}  # r12 is quoted by the evaluation set; r13 is over the token budget
    for index, company in enumerate(COMPANIES[:14]):
        year = 2016 + index % 8
        paragraphs = _report(rng, company, year, extra_years=6 if index == 13 else 0)
        reports[f"r{index:02d}"] = (company[0], year, paragraphs)
    docmath_rows: dict[str, list[dict]] = {s: [] for s in DOCMATH_SUBSETS}
    for number, (report_id, (company, year, paragraphs)) in enumerate(reports.items()):
        subset = DOCMATH_SUBSETS[number % 2]
        docmath_rows[subset].append(_docmath_row(report_id, paragraphs, company, year, 1))
        if report_id in ("r03", "r08"):  # asked about twice: the same report in two rows
            docmath_rows[subset].append(_docmath_row(report_id, paragraphs, company, year, 2))
    for subset, subset_rows in docmath_rows.items():
        _write_jsonl(folder / DOCMATH_DIR / f"{subset}_test.jsonl", subset_rows)

    _write_jsonl(folder / EVAL_FILE, _eval_rows(reports["r12"][2]))
    families = tuple(documents for _, documents in FAMILIES)
    web_read = len(rows)
    web_filtered = web_read - len(LOW_SCORE) - len(TOO_SHORT) - 1
    deduplicated = web_filtered - len(NEAR_DUPLICATES)
    docmath_read = sum(map(len, docmath_rows.values()))
    return Expected(
        web_read=web_read,
        web_filtered=web_filtered,
        web_deduplicated=deduplicated,
        web_decontaminated=deduplicated - len(EVAL_COPIES) - len(AIME_COPIES),
        families=families,
        docmath_read=docmath_read,
        docmath_filtered=docmath_read - 1,
        docmath_deduplicated=docmath_read - 1 - 2,
        docmath_decontaminated=docmath_read - 1 - 2 - 1,
    )


def _eval_rows(quoted_report: list[str]) -> list[dict]:
    """Three long-context items in SPELL's prompts: a general-QA item over EVAL_PASSAGES, a financial-math
    item over a report the DocMath-style rows also hold, and a multiple-choice item nothing copies."""
    from benchmarks.doc_prompts import FINANCIAL_MATH, GENERAL_QA, MULTIPLE_CHOICE, fill

    choices = {"choice_A": "1790", "choice_B": "1803", "choice_C": "1846", "choice_D": "1921"}
    unrelated = (
        "The Ferrand Observatory of Weather kept daily records from 1871. Its rain gauge, the oldest in the "
        "region, measured 1,132 millimetres of rain in a normal year and 1,690 in the wet year of 1912."
    )
    return [
        {
            "id": "canal-qa",
            "problem": fill(
                GENERAL_QA,
                content="\n".join(EVAL_PASSAGES),
                question="Where is the chief engineer of the Quorra Canal buried?",
            ),
            "answer": "Beside the canal at Tallis Lock",
        },
        {
            "id": "report-math",
            "problem": fill(
                FINANCIAL_MATH,
                content="\n".join(quoted_report),
                question="What was the total revenue growth in percent?",
            ),
            "answer": "5.2",
        },
        {
            "id": "weather-mc",
            "problem": fill(
                MULTIPLE_CHOICE, content=unrelated, question="When did the records start?", **choices
            ),
            "answer": "A",
        },
    ]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def fingerprint() -> str:
    """A hash of the generator's fixed text, recorded in manifests of synthetic builds."""
    text = json.dumps([FAMILIES, NEAR_DUPLICATES, LOW_SCORE, TOO_SHORT, EVAL_PASSAGES, COMPANIES])
    return hashlib.sha256(text.encode()).hexdigest()[:16]
