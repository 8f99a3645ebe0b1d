"""The starting kit (contract sections 6 and 10): a files competition's example upload
(:func:`example_upload`) and a code competition's complete working ``team_code/`` (:func:`kit_code`): a
Kneser-Ney bigram model of words and of their endings in plain Python (:data:`KIT_GENERATE`) over everyday
Russian sentences written for it (:data:`KIT_TEXTS`), one a line, the same in every bundle, taken from no
data set: the kit never holds an answer of the data it is bundled with, whose answers stay private.
"""

from __future__ import annotations

import hashlib
import json

from scorer.inputs.contract import PPL, SUBMISSION

#: Where the kit's code stands in the bundle.
KIT_CODE = "starting_kit/team_code"


#: The sentences the starting kit's model learns from (``team_code/texts.txt``).
KIT_TEXTS = """Москва — самый большой город страны.
В столице много музеев, театров и парков.
Санкт-Петербург стоит на берегу Невы.
Летом в Петербурге бывают белые ночи.
Байкал — самое глубокое озеро на планете.
Волга впадает в Каспийское море.
Урал отделяет Европу от Азии.
На севере России зима длится больше полугода.
В тундре почти нет деревьев, растут мох и лишайники.
На юге страны тепло, там выращивают виноград.
Казань — столица Татарстана.
От Москвы до Казани можно доехать на поезде за ночь.
Поезд прибывает на вокзал в семь часов вечера.
Электричка отправляется с третьего пути.
Рейс задерживается на сорок минут.
Пассажиров просят пройти на посадку.
Автобус ходит каждые пятнадцать минут.
Мы поедем на дачу в субботу утром.
Доброе утро, как вы спали?
Добрый вечер, рад вас видеть.
Привет, давно не виделись!
Спасибо за помощь, вы очень добры.
Пожалуйста, обращайтесь в любое время.
Извините, я не расслышал вопрос.
Повторите, пожалуйста, ещё раз.
Я не знаю точного ответа.
Кажется, это правильный ответ.
Скорее всего, вы правы.
Да, это так.
Нет, это не совсем верно.
Хороший вопрос, давайте разберёмся.
Сегодня пасмурно и дует холодный ветер.
Завтра обещают солнечную погоду без осадков.
Вечером пойдёт дождь, возьмите зонт.
Ночью будет мороз, до минус двадцати градусов.
Весной тает снег и прилетают птицы.
Осенью листья желтеют и опадают.
Зимой реки покрываются льдом.
Летом дни длинные, а ночи короткие.
Погода на море часто меняется.
Над городом собираются тучи.
После грозы воздух становится свежим.
Туман рассеялся к полудню.
Ветер гонит волны к берегу.
Два плюс три равно пяти.
Семь умножить на шесть будет сорок два.
Сто разделить на четыре будет двадцать пять.
В году двенадцать месяцев.
В неделе семь дней.
В сутках двадцать четыре часа.
В обычном году триста шестьдесят пять дней.
Раз в четыре года февраль длится двадцать девять дней.
Сейчас половина четвёртого.
Встреча начнётся ровно в полдень.
Через час будет шесть часов вечера.
Часы показывают без пятнадцати девять.
Ему исполнилось десять лет.
Котёнку всего два месяца.
Щенку примерно полгода.
Кошка спит на диване.
Кот ловит мышь в саду.
Рыжий кот греется на солнце.
Чёрная кошка сидит на подоконнике.
Котёнок играет с клубком ниток.
Кошка мурлычет, когда её гладят.
Собака громко лает на прохожих.
Пёс охраняет дом и двор.
Собака бежит за мячом.
Лохматый пёс лежит на ковре.
Спаниель — охотничья порода собак.
Овчарка очень умная и верная собака.
Лошадь пасётся на лугу.
Корова даёт молоко.
В лесу живут волки, лисы и медведи.
Белка прыгает с ветки на ветку.
Ёж свернулся в клубок.
Птицы поют рано утром.
Соловей поёт по ночам.
Ворона сидит на заборе.
Утки плавают в пруду.
Чайки кружат над морем.
На картинке изображён дом с красной крышей.
На картинке нарисовано синее небо.
На фотографии видна река и лодка.
На фотографии три девочки играют в мяч.
На снимке много людей.
На снимке видна старая церковь.
На фото зимний лес, всё покрыто снегом.
На фото молодая женщина с ребёнком.
На переднем плане стоит стол, на нём ваза с цветами.
На заднем плане видны горы.
В центре снимка стоит высокое здание.
Слева стоит велосипед, справа скамейка.
Фотография сделана летом, вокруг зелёная трава.
Снимок сделан вечером, на небе закат.
На изображении двое мужчин пожимают руки.
На рисунке ребёнок держит воздушный шар.
На вывеске большими буквами написано название магазина.
На табличке указан номер дома.
На плакате нарисован космический корабль.
На графике видно, как росли цены.
Линия на графике поднимается вверх.
Диаграмма показывает доли расходов.
На столе лежат книги и тетради.
На кухне мама печёт пирог.
На сковороде жарится яичница.
В кастрюле варится суп.
Девушка стоит у окна и смотрит на улицу.
Мальчик катается на велосипеде по парку.
Дети лепят снеговика во дворе.
Старик сидит на скамейке и читает газету.
По улице едут машины и автобусы.
У тротуара припаркован синий автомобиль.
Грузовик везёт песок.
Трамвай поворачивает на площадь.
Самолёт летит высоко над облаками.
Корабль плывёт к порту.
На площади стоит памятник поэту.
Памятник установлен в центре сквера.
Колонна видна издалека.
Мост соединяет два берега реки.
На записи слышен голос мужчины.
На записи говорит женщина.
В записи звучит детский смех.
На записи слышно пение птиц.
На аудиозаписи играет фортепиано.
На записи звучит гитара.
Играет скрипка, мелодия грустная.
Слышно, как работает двигатель.
На фоне слышен шум моря.
Слышно, как шумит ветер в деревьях.
Вдалеке гремит гром.
Где-то лает собака.
Кошка жалобно мяукает.
По крыше стучит дождь.
Слышны гудки машин.
Кто-то стучит в дверь.
Звонит телефон.
Человек говорит быстро и взволнованно.
Голос спокойный и уверенный.
Говорящий доволен и смеётся.
Собеседники спорят о политике.
Два человека обсуждают новый фильм.
Ведущий объявляет прогноз погоды.
Диктор читает новости.
Объявляют посадку на поезд.
Музыка быстрая и весёлая.
Песню исполняет мужской хор.
Мелодия медленная и спокойная.
Песня рассказывает о любви.
Слова песни трудно разобрать.
Речь идёт о завтрашнем собрании.
Говорят по-русски с акцентом.
Человек говорит на английском языке.
Запись очень короткая, всего несколько секунд.
Звук тихий, слова едва слышны.
Я советую прочитать «Евгения Онегина» Пушкина.
Роман «Преступление и наказание» написал Достоевский.
Пушкин жил в первой половине девятнадцатого века.
Чехов писал рассказы и пьесы.
В этой книге три части.
Книга интересная, её легко читать.
Для отпуска подойдёт лёгкий детектив.
Стихи Есенина посвящены природе.
Толстой написал роман «Анна Каренина».
Горький родился в Нижнем Новгороде.
Чтобы сварить рис, залейте его водой и варите пятнадцать минут.
Картошку нужно почистить и отварить в солёной воде.
Для борща нужны свёкла, капуста, морковь и лук.
Блины пекут из муки, молока и яиц.
Кашу варят на молоке.
Чай заваривают кипятком и настаивают пять минут.
Суп нужно посолить и добавить зелень.
Мясо жарят на сильном огне.
Салат готовят из свежих овощей.
Пирог печётся в духовке около часа.
Растения поглощают углекислый газ и выделяют кислород.
Вода кипит при ста градусах.
Земля вращается вокруг Солнца.
Луна — спутник Земли.
Свет от Солнца доходит до Земли за восемь минут.
Человек дышит кислородом.
Деревья растут медленно.
Листья зелёные, потому что в них есть хлорофилл.
Лёд тает при нуле градусов.
Звук распространяется медленнее света.
Котёнка можно назвать Барсиком.
Собаку можно назвать Дружком.
Хорошее имя для кошки — Маруся.
Рыжего щенка часто зовут Рыжиком.
Это красивое имя.
Мне нравится эта песня.
Фильм был очень интересным.
Картина висит в музее.
Мы гуляли в парке весь день.
Я читаю книгу перед сном.
Он работает инженером на заводе.
Она учится в университете.
Мои друзья живут в соседнем доме.
Мы встретились у входа в метро.
Магазин открывается в девять утра.
В булочной продают свежий хлеб.
Кафе находится на углу улицы.
Аптека работает круглосуточно.
Библиотека закрыта по понедельникам.
В школе начались каникулы.
Урок длится сорок пять минут.
Учитель объясняет новую тему.
Студенты сдают экзамен.
Врач советует больше гулять.
Футбольный матч закончился вничью.
Команда выиграла со счётом два один.
Хоккей популярен в России.
Спортсмены бегут по стадиону.
Зрители громко болеют за своих.
Море сегодня спокойное.
Волны разбиваются о камни.
На пляже много отдыхающих.
Мы купались в тёплой воде.
В горах лежит снег даже летом.
Туристы поднимаются на вершину.
Лес тянется до самого горизонта.
На опушке растут грибы и ягоды.
Река течёт между холмами.
Озеро окружено высокими соснами.
Ответ — четыре.
Ответ — да.
Это собака.
Это кошка.
Это поезд.
Это скрипка.
Это город у моря.
Это зимний пейзаж.
Их двое.
Их пятеро.
Там никого нет.
Людей на снимке нет.
Цвет машины — белый.
Стены выкрашены в жёлтый цвет.
Небо голубое, облака белые.
Трава зелёная, цветы красные.
Да, звук совпадает с изображением.
Нет, звук не совпадает с картинкой.
И на фото, и на записи — море.
На фото гитара, но на записи звучит рояль.
Похоже, что это весна.
По одежде людей видно, что сейчас осень.
Судя по снегу, это зима.
Судя по теням, это утро.
Время на часах — десять минут второго.
Через три часа будет полночь.
"""


#: The starting kit's model: plain Python, its texts beside it (``texts.txt``).
KIT_GENERATE = r'''
"""A small working model for the competition's protocol, in plain Python, over the texts of texts.txt: a
bigram model of words and punctuation marks (interpolated Kneser-Ney), mixed half and half with a bigram
model of the words' endings, which also knows the order of words it has never seen. It answers with the
question's own words and the words its texts use most, and gives real perplexities of the target text."""

import math
import os
import re

TOKEN = re.compile(r"\w+|[^\w\s]")
START, END = "<s>", "</s>"
DISCOUNT = 0.75  # Kneser-Ney's absolute discount
UNSEEN = 0.05  # the share of the lower-order distribution kept for symbols never seen
OPEN_WORDS = 20000  # how many word forms one ending is taken to have (most of them never seen)
COMMON_WORDS = 3  # how many of the texts' commonest words an answer adds


def _tokens(text):
    """The text's words and punctuation marks, in lower case, with е for ё."""
    return TOKEN.findall(text.lower().replace("ё", "е"))


def _ending(token):
    """A word's last two letters; a number, a mark and the text's start and end stand for themselves."""
    return "-" + token[-2:] if token[:1].isalpha() else "#" if token.isdigit() else token


def _text_of(parts):
    return " ".join(p["content"] for p in parts if p["type"] == "text")


class Bigrams:
    """An interpolated Kneser-Ney bigram model of sequences of symbols."""

    def __init__(self, sequences):
        self.pairs, self.left, self.after, self.before = {}, {}, {}, {}
        for seq in sequences:
            for a, b in zip(seq, seq[1:]):
                if (a, b) not in self.pairs:
                    self.after[a] = self.after.get(a, 0) + 1  # how many symbols follow a
                    self.before[b] = self.before.get(b, 0) + 1  # how many symbols precede b
                self.pairs[(a, b)] = self.pairs.get((a, b), 0) + 1
                self.left[a] = self.left.get(a, 0) + 1

    def p(self, a, b, unseen):
        """P(b | a), where ``unseen`` is b's probability among symbols never seen."""
        lower = (1 - UNSEEN) * self.before.get(b, 0) / len(self.pairs) + UNSEEN * unseen
        seen = self.left.get(a, 0)
        if not seen:
            return lower
        return (max(self.pairs.get((a, b), 0) - DISCOUNT, 0) + DISCOUNT * self.after[a] * lower) / seen


def setup_model_and_tokenizer():
    """Read texts.txt (one text a line) and count its words, their endings and their pairs."""
    folder = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(folder, "texts.txt"), encoding="utf-8") as fh:
        texts = [line.strip() for line in fh if line.strip()]
    sequences = [[START] + _tokens(text) + [END] for text in texts]
    forms = {}  # ending -> {word: count}
    for seq in sequences:
        for token in seq[1:]:
            counts = forms.setdefault(_ending(token), {})
            counts[token] = counts.get(token, 0) + 1
    spread = {}  # word -> how many texts hold it
    for seq in sequences:
        for token in set(seq[1:-1]):
            if token[:1].isalpha():
                spread[token] = spread.get(token, 0) + 1
    model = {
        "texts": texts,
        "common": sorted(spread, key=lambda w: (-spread[w], w)),
        "words": Bigrams(sequences),
        "endings": Bigrams([[_ending(t) for t in seq] for seq in sequences]),
        "forms": forms,
    }
    return model, _tokens


def _p(model, a, b):
    """P(b | a) over words and marks: half the words' bigrams, half P(b's ending | a's) P(b | its ending)."""
    if b[:1].isalpha():
        forms = model["forms"].get(_ending(b), {})
        total = sum(forms.values())
        discounted = max(forms.get(b, 0) - DISCOUNT, 0) + DISCOUNT * len(forms) / OPEN_WORDS
        of_ending = discounted / total if total else 1 / OPEN_WORDS
    else:
        of_ending = 1 / 1000 if b.isdigit() else 1.0  # a number among a thousand; a mark is its own ending
    by_word = model["words"].p(a, b, 1 / OPEN_WORDS)
    by_ending = model["endings"].p(_ending(a), _ending(b), 1 / 1000) * of_ending
    return (by_word + by_ending) / 2


def generate_text(model, tokenizer, cur_query_list, history_list):
    """The question's own words (an answer usually repeats them), with "Да," first for a yes-no question
    (one that asks with "ли"), and after them the words its texts use most (in the most texts) that the
    answer lacks: the words a Russian answer is likeliest to hold."""
    question = _text_of(cur_query_list).strip().rstrip("?").strip()
    if "ли" in tokenizer(question):
        question = "Да, " + question[:1].lower() + question[1:]
    have = set(tokenizer(question))
    return " ".join([question, *[w for w in model["common"] if w not in have][:COMMON_WORDS]]).strip()


def get_ppl(model, tokenizer, cur_query_tuple, history_list):
    """exp of the mean negative log-probability of the target's words and marks, and of its end."""
    _query, target = cur_query_tuple
    tokens = [START] + tokenizer(target) + [END]
    total = -sum(math.log(_p(model, a, b)) for a, b in zip(tokens, tokens[1:]))
    return math.exp(total / (len(tokens) - 1))
'''.lstrip("\n")


def kit_code() -> dict[str, bytes]:
    """The starting kit's ``team_code/``: the model and the texts it learns from."""
    return {
        f"{KIT_CODE}/__init__.py": b"",
        f"{KIT_CODE}/generate.py": KIT_GENERATE.encode("utf-8"),
        f"{KIT_CODE}/texts.txt": KIT_TEXTS.encode("utf-8"),
    }


def example_upload(dialogues_bytes: bytes) -> dict[str, bytes]:
    """An example upload that ``validate`` accepts, for the dialogues of ``dialogues_bytes`` (a checked
    ``dialogues.jsonl``): each turn answered with its own text parts (a baseline that repeats the
    question) and a perplexity between 2 and 22 drawn from the turn's dialog_id."""
    lines, ppl = [], {}
    for line in dialogues_bytes.decode("utf-8-sig").split("\n"):
        if not line.strip():
            continue
        d = json.loads(line)
        answers = [" ".join(p["content"] for p in turn if p["type"] == "text")[:2000] for turn in d["turns"]]
        lines.append(json.dumps({"dialog_id": d["dialog_id"], "answers": answers}, ensure_ascii=False))
        ppl[d["dialog_id"]] = [_example_ppl(d["dialog_id"], k) for k in range(len(answers))]
    return {
        SUBMISSION: ("\n".join(lines) + "\n").encode("utf-8"),
        PPL: (json.dumps(ppl, ensure_ascii=False) + "\n").encode("utf-8"),
    }


def _example_ppl(dialog_id: str, turn: int) -> float:
    digest = hashlib.sha256(f"{dialog_id}\0{turn}".encode()).digest()
    return round(2 + int.from_bytes(digest[:4], "big") % 2000 / 100, 2)
