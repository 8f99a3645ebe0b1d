"""The words a bundle publishes (contract sections 10 and 11): the texts the starting kit's model of a code
competition learns from (``team_code/texts.txt``), and the pages, the starting kit's README and the short
texts of ``competition.yaml`` in English and in Russian (``[platform] language``), made from the
competition a bundle plans (:class:`scorer.outputs.bundle.Competition`).

The kit's texts are everyday Russian sentences written for it, one a line, the same in every bundle, taken
from no data set: the kit never holds an answer of the data it is bundled with, whose answers stay private.
The pages follow the configuration in force (the METEOR stages, alpha, beta and gamma, the weights, the
limits), never the defaults, and say of the hidden metric only that it is derived from the perplexities."""

from __future__ import annotations

import datetime
from collections.abc import Sequence

from scorer.inputs.contract import DIALOGUES, PPL, SUBMISSION

from .code_bundle import KIT_GENERATE, RUN_FOLDER, Competition, Task, runner_options

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


# --- the pages (contract sections 6, 10 and 11), in English and in Russian ----------------------------------

_WORDS = {
    "en": {
        "scoring_program": "Scores an upload: Russian METEOR, the hidden metric and the integral",
        "ingestion_program": "Runs the team's team_code/generate.py on every dialogue (generation)",
        "integral": "Integral score",
        "hidden_metric": "Hidden metric",
        "test": "Test",
        "development": "Development",
        "final": "Final",
        "task_test": "Dialogue answers",
        "task_development": "Development dialogues",
        "task_final": "Held-out dialogues",
        "final_description": "The organizers' final run of each team's selected upload on the held-out "
        "dialogues. For the organizers alone: never publish this competition.",
        "description": "Answer multimodal dialogues (text, images, audio) in Russian; scored by a Russian "
        "METEOR and a hidden metric derived from the model's perplexities, weighted by dialogue type.",
    },
    "ru": {
        "scoring_program": "Оценивает посылку: METEOR для русского языка, скрытая метрика и интегральная "
        "оценка",
        "ingestion_program": "Запускает team_code/generate.py команды на каждом диалоге (генерация ответов)",
        "integral": "Интегральная оценка",
        "hidden_metric": "Скрытая метрика",
        "test": "Тест",
        "development": "Разработка",
        "final": "Финал",
        "task_test": "Ответы в диалогах",
        "task_development": "Диалоги этапа разработки",
        "task_final": "Отложенные диалоги",
        "final_description": "Финальный запуск организаторами выбранной посылки каждой команды на "
        "отложенных диалогах. Только для организаторов: никогда не публикуйте это соревнование.",
        "description": "Ответы на мультимодальные диалоги (текст, изображения, аудио) на русском языке; "
        "оценка — METEOR для русского языка и скрытая метрика по перплексиям модели, с весами по типам "
        "диалогов.",
    },
}
_PAGE_TITLES = {
    "en": ("Overview", "Evaluation", "Data", "Terms"),
    "ru": ("Обзор", "Оценка", "Данные", "Условия"),
}
_RULES = {
    "en": {
        "Add": "each team chooses one of its successful uploads for the leaderboard",
        "Add_And_Delete": "each team chooses one of its successful uploads for the leaderboard and may "
        "withdraw it",
        "Add_And_Delete_Multiple": "each team chooses which of its successful uploads stand on the "
        "leaderboard, and may withdraw them",
        "Force_Last": "each team's last successful upload stands on the leaderboard",
        "Force_Latest_Multiple": "every successful upload is added to the leaderboard as it comes",
        "Force_Best": "each team's best successful upload (by the integral score) stands on the leaderboard",
    },
    "ru": {
        "Add": "каждая команда сама выбирает для таблицы одну из своих успешных посылок",
        "Add_And_Delete": "каждая команда выбирает для таблицы одну из своих успешных посылок и может "
        "её снять",
        "Add_And_Delete_Multiple": "каждая команда выбирает, какие из её успешных посылок стоят в таблице, и "
        "может их снять",
        "Force_Last": "в таблице стоит последняя успешная посылка каждой команды",
        "Force_Latest_Multiple": "каждая успешная посылка добавляется в таблицу по мере поступления",
        "Force_Best": "в таблице стоит лучшая (по интегральной оценке) успешная посылка каждой команды",
    },
}


def word(language: str, key: str) -> str:
    """A short text of the bundle (a name, a description) in ``language``."""
    return _WORDS[language][key]


def page_titles(language: str) -> tuple[str, ...]:
    """The four pages' titles: overview, evaluation, data, terms."""
    return _PAGE_TITLES[language]


def _day(value: datetime.date) -> str:
    return value.isoformat()


def _list(language: str, items: Sequence[str]) -> str:
    """``a, b and c`` (``a, b и c``)."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + (" and " if language == "en" else " и ") + items[-1]


def phase_description(competition: Competition, task: Task) -> str:
    """The phase's description in ``competition.yaml``."""
    en = competition.language == "en"
    if task.phase == "final":
        return (
            "The held-out dialogues: the organizers upload each team's selected development upload here, "
            "under the team's name."
            if en
            else "Отложенные диалоги: организаторы загружают сюда выбранную посылку каждой команды с этапа "
            "разработки, под названием команды."
        )
    if competition.code:
        return (
            "Upload a .zip holding team_code/ (generate.py with the three functions)."
            if en
            else "Загрузите .zip с папкой team_code/ (generate.py с тремя функциями)."
        )
    return (
        "Upload submission.jsonl and ppl_output.json (or one .zip of them)."
        if en
        else "Загрузите submission.jsonl и ppl_output.json (или один .zip с ними)."
    )


def task_description(competition: Competition, task: Task) -> str:
    """The task's description in ``competition.yaml``."""
    en = competition.language == "en"
    if task.phase == "final":
        return "The held-out dialogues of the final." if en else "Отложенные диалоги финала."
    return (
        "Answers and perplexities for every turn of the dialogues."
        if en
        else "Ответы и перплексии для каждой реплики диалогов."
    )


def final_title(c: Competition) -> str:
    """The title of the organizer's final competition."""
    return f"{c.title}: " + (
        "the final (organizers only)" if c.language == "en" else "финал (только для организаторов)"
    )


def _selected(c: Competition) -> str:
    """Which development upload of a team the organizers' final runs (contract section 11)."""
    rule = c.platform.submission_rule
    if c.language == "en":
        if rule == "Force_Last":
            return "the team's last successful upload, the one on the development leaderboard"
        if rule == "Force_Best":
            return "the team's best successful upload, the one on the development leaderboard"
        return (
            "the upload the team has on the development leaderboard (where it has several there, the best "
            "by the integral score)"
        )
    if rule == "Force_Last":
        return "последняя успешная посылка команды, та, что стоит в таблице этапа разработки"
    if rule == "Force_Best":
        return "лучшая успешная посылка команды, та, что стоит в таблице этапа разработки"
    return (
        "посылка команды из таблицы этапа разработки (если их там несколько, лучшая по интегральной оценке)"
    )


def pages(competition: Competition) -> tuple[str, str, str, str]:
    """The overview, evaluation, data and terms pages of ``competition``, in its language (the organizer's
    final competition has an overview and a data page of its own)."""
    if competition.organizers_final:
        if competition.language == "ru":
            return (
                _final_overview_ru(competition),
                _evaluation_ru(competition),
                _final_data_ru(competition),
                _terms_ru(competition),
            )
        return (
            _final_overview_en(competition),
            _evaluation_en(competition),
            _final_data_en(competition),
            _terms_en(competition),
        )
    if competition.language == "ru":
        return (
            _overview_ru(competition),
            _evaluation_ru(competition),
            _data_ru(competition),
            _terms_ru(competition),
        )
    return (
        _overview_en(competition),
        _evaluation_en(competition),
        _data_en(competition),
        _terms_en(competition),
    )


def code_kit_readme(competition: Competition) -> str:
    """The starting kit's README of a code competition: how to run the kit's code and check its files."""

    options = runner_options(competition.platform)
    check = _how_to_check(competition, RUN_FOLDER, f"`{RUN_FOLDER}/`")
    if competition.language == "ru":
        return f"""# Стартовый набор (соревнование с кодом)

`team_code/` — полная рабочая посылка: биграммная модель слов и их окончаний по текстам
`team_code/texts.txt` (чистый Python, без зависимостей). Замените её `generate.py` своим, сохранив
три функции.

Запустите её у себя так же, как это сделает платформа, исполнителем оценщика (`runner.py` здесь:
один файл, Python 3.8 или новее, ничего не нужно устанавливать) и с ограничениями времени платформы,
из папки, в которой лежат `public_data/` и `starting_kit/`:

    python3 starting_kit/runner.py --data public_data --code starting_kit --output {RUN_FOLDER} {options}

затем проверьте записанные им файлы командой оценщика `validate` (перплексии здесь посчитаны по
собственным ответам модели: эталонные ответы скрыты).

{check}

Загрузите zip с папкой `team_code/` в корне:

    cd starting_kit && zip -r ../my_upload.zip team_code
"""
    return f"""# Starting kit (code competition)

`team_code/` is a complete, working upload: a bigram model of words and of their endings over
`team_code/texts.txt` (plain Python, no dependencies). Replace its `generate.py` with your model's,
keeping the three functions.

Run it locally as the platform will, with the scorer's runner (`runner.py` here: one file, Python 3.8 or
newer, nothing to install) and the platform's time limits, from the folder that holds `public_data/` and
`starting_kit/`:

    python3 starting_kit/runner.py --data public_data --code starting_kit --output {RUN_FOLDER} {options}

then check the files it wrote with the scorer's `validate` (the perplexities are of the model's own
answers: the targets are hidden).

{check}

Upload a zip holding the `team_code/` folder at its root:

    cd starting_kit && zip -r ../my_upload.zip team_code
"""


def files_kit_readme(competition: Competition) -> str:
    """The starting kit's README of a files competition: the example upload and how to check one."""
    check = _how_to_check(competition, "starting_kit")
    if competition.language == "ru":
        return f"""# Стартовый набор

`{SUBMISSION}` и `{PPL}` — пример посылки: каждая реплика получает в ответ текст вопроса
(слабый базовый уровень), перплексии выдуманы. Замените оба файла ответами и перплексиями своей модели.

Проверьте посылку перед загрузкой.

{check}

Затем загрузите оба файла или один `.zip` с ними:

    zip submission.zip {SUBMISSION} {PPL}
"""
    return f"""# Starting kit

`{SUBMISSION}` and `{PPL}` are an example upload: every turn answered by repeating the
user's text (a weak baseline), with made-up perplexities. Replace both with your model's.

Check an upload before you submit it.

{check}

Then upload the two files, or one `.zip` of them:

    zip submission.zip {SUBMISSION} {PPL}
"""


_COPY_SCORER = (
    'python3 -c "import os, shutil, scorer; shutil.copytree(os.path.dirname(scorer.__file__), '
    "'/work/scorer', ignore=shutil.ignore_patterns('__pycache__'))\""
)


def _how_to_check(competition: Competition, submission: str, beside: str = "") -> str:
    """How a participant gets the scorer and runs ``validate`` on ``submission``: in the competition's image,
    or as the Python package copied out of it; ``beside`` names the upload in the sentence."""
    image = competition.image
    docker = f"""    docker run --rm -v "$PWD:/work" -w /work {image} \\
        python3 -m scorer validate --data public_data --submission {submission}"""
    copy = f"""    docker run --rm -v "$PWD:/work" {image} \\
        {_COPY_SCORER}"""
    if competition.language == "ru":
        where = beside or "ваша посылка"
        return f"""Оценщик тот же, что на платформе; его можно получить двумя способами.

В образе соревнования `{image}` (нужен только Docker), из папки, в которой лежат `public_data/` и
{where}:

    docker pull {image}
{docker}

Или как пакет Python (Python 3.11 или новее): оценщик — это пакет `scorer` в том же образе.
Скопируйте его из образа один раз и установите его зависимости:

{copy}
    python3 -m pip install -r scorer/dependencies.txt

затем в той же папке:

    python -m scorer validate --data public_data --submission {submission}"""
    where = beside or "your upload"
    return f"""The scorer is the platform's own; get it in one of two ways.

In the competition's image `{image}` (nothing to install but Docker), from the folder that holds
`public_data/` and {where}:

    docker pull {image}
{docker}

Or as a Python package (Python 3.11 or newer): the scorer is the package `scorer` in that image.
Copy it out once and install what it needs:

{copy}
    python3 -m pip install -r scorer/dependencies.txt

then, in the same folder:

    python -m scorer validate --data public_data --submission {submission}"""


# --- English ----------------------------------------------------------------------------------------------


def _phases_en(c: Competition) -> str:
    p = c.platform
    rule = _RULES["en"][p.submission_rule]
    per_day, total = p.max_submissions_per_day, p.max_submissions
    limits = f"""Each team may upload {per_day} times a day and {total} times in all
(an upload whose run fails does not count); the leaderboard's rule: {rule}."""
    final = c.final
    if final is None:
        return f"""## Phase and limits

The phase starts on {_day(p.development_start)} at 00:00 UTC and has no end. {limits}
"""
    dev, end = c.development, c.development_end()
    assert end is not None
    return f"""## Phase, limits and the final

1. **Development**, from {_day(p.development_start)} 00:00:00 UTC to {_day(end)} 23:59:59 UTC: your code
   runs on the development dialogues ({len(dev.dialogues):,} dialogues, {dev.turns:,} turns; `public_data/`
   holds them) and is ranked on this competition's leaderboard. {limits}
2. **The final**, from {_day(final_start(c))}, is run by the organizers: no team uploads to it. Once the
   development phase has closed, they run {_selected(c)}, on held-out dialogues
   ({len(final.dialogues):,} dialogues, {final.turns:,} turns of the same types, never published), with
   the same image, time limits and steps, on the platform's workers or in the competition's image on
   their own machines without a network. Nothing of the held-out dialogues, nor of how a team's code
   fared on them, reaches any team before the organizers publish the final ranking, which they do once
   every team's upload has run. An upload whose code fails on the held-out dialogues is listed invalid
   with its fault; the organizers run an upload again only where the platform, not the code, failed.
"""


def final_start(c: Competition) -> datetime.date:
    start = c.platform.final_start
    assert start is not None
    return start


def _time_table_en(c: Competition) -> str:
    p = c.platform
    rows = []
    for task in c.timed:
        name = word("en", task.phase)
        rows.append(f"| {name} | generation | {task.turns:,} turns | {task.seconds(p, False):,} |")
        rows.append(
            f"| {name} | scoring | {task.turns:,} turns + {task.probes:,} probes "
            f"| {task.seconds(p, True):,} |"
        )
    return "\n".join(rows)


def _time_limits_en(c: Competition) -> str:
    p = c.platform
    return f"""## Time limits

Each of the two steps on the platform, the generation of your answers and the scoring (which computes
your perplexities), may take at most {p.execution_time_limit:,} s (the phase's `execution_time_limit`).
Within a step the runner stops your code, and names the fault, when `setup_model_and_tokenizer` runs
past {p.setup_timeout:,} s, when one call of `generate_text` or `get_ppl` runs past {p.turn_timeout:,} s,
and when the whole step (setup and every call) runs past {p.step_timeout:,} s, which leaves the
platform time to finish. So after a setup of {p.setup_timeout:,} s your code has on average, per call,
(the step's {p.step_timeout:,} s less the setup) / the calls, rounded down:

| phase | step | calls | seconds a call on average |
| --- | --- | ---: | ---: |
{_time_table_en(c)}

A faster setup leaves more. The scoring step also calls `get_ppl` on some turns with the target's words
in another order (the probes above): the organizers' check that the perplexities come from a language
model, which counts for nothing in the score. A step that runs past {p.execution_time_limit:,} s is
ended by the platform and the upload is not scored."""


def _image_en(c: Competition) -> str:
    packages = c.platform.packages
    listed = (
        "Besides Python's standard library, your code can import these packages there: "
        + ", ".join(f"`{name}`" for name in packages)
        + "."
        if packages
        else "Ask the organizers which Python packages (and versions) your code can import there."
    )
    return f"""## Where your code runs

Both steps run your code in the competition's image, `{c.image}`. {listed} Put your weights in your
upload only if they are small; ask the organizers to add large ones to the image.{_network_en(c)}
An exception, a wrong value, a missing function, a call past its limit or a process that dies
stops the run, and the upload is not scored. In the generation step the scoring log names the fault
(the function, the dialogue and the turn); in the scoring step, which holds the hidden answers, it says
only `the team's code failed in the scoring step`."""


def _network_en(c: Competition) -> str:
    if c.offline:
        return " The steps run without a network: a run that finds one up stops before your code starts."
    return " The steps may run with a network; do not rely on one."


def _protocol_en(c: Competition) -> str:

    return f"""## What to upload

One `.zip` holding the package `team_code/` (a folder with `__init__.py`) at its root or in one
top-level folder. Its module `team_code/generate.py` defines three functions:

    setup_model_and_tokenizer() -> (model, tokenizer)
    generate_text(model, tokenizer, cur_query_list, history_list) -> str
    get_ppl(model, tokenizer, cur_query_tuple, history_list) -> float

The platform runs your code twice, each time in a fresh process with its own
`setup_model_and_tokenizer()`:

1. **Generation**, for each dialogue in order and each turn i: `generate_text(model, tokenizer, q_i,
   [(q_0, a_0), ..., (q_(i-1), a_(i-1))])`, where `q_i` is the turn's list of parts as in
   `dialogues.jsonl` (`{{"type": "text"|"image"|"audio", "content": ...}}`, media paths absolute) and
   `a_k` your own earlier answers. Return a `str` (a tuple counts by its first element).
2. **Perplexity**, after every answer is written: `get_ppl(model, tokenizer, (q_i, t_i),
   [(q_0, t_0), ..., (q_(i-1), t_(i-1))])`, where `t_k` is the turn's target answer. Return a real
   number, finite and at least 1 (an `int`, a `float` or a numpy scalar).

The images and audio files the dialogues name are in `public_data/` beside `dialogues.jsonl`, at the
paths the dialogues give.

A complete example is the starting kit's `team_code/generate.py`:

```python
{KIT_GENERATE.strip()}
```"""


def _local_command(c: Competition) -> str:
    """The participant's local run of an upload, with the platform's limits."""

    options = runner_options(c.platform)
    return (
        f"python3 starting_kit/runner.py --data public_data --code my_upload.zip --output {RUN_FOLDER} "
        + options
    )


def _local_run_en(c: Competition) -> str:

    p, local = c.platform, _local_command(c)
    return f"""## Run your code locally first

    {local}

The runner (`starting_kit/runner.py`: one file, Python 3.8 or newer, no dependencies) calls your
functions exactly as the platform does and names every fault; `--setup-timeout {p.setup_timeout}
--turn-timeout {p.turn_timeout} --step-timeout {p.step_timeout}` are the platform's limits (without them
the runner allows 3,600 s for the setup, 600 s a call and no limit on the step), `--resume` continues a
run you stopped. Without the hidden answers its perplexities are of your model's own answers.

Then check the files it wrote with the scorer's `validate`, as the platform will.

{_how_to_check(c, RUN_FOLDER, f"`{RUN_FOLDER}/`")}"""


def _seen_en(c: Competition) -> str:
    if c.code:
        return f"""## What you see after scoring

The scoring log and the leaderboard: the integral score, METEOR, the hidden metric and the score of
each dialogue type, each figure rounded to {c.decimals} decimals. The scoring step's output folder and
its detailed results are hidden in this competition (your code runs beside the hidden answers there).
Nothing shown holds the test set's answers.
"""
    details = c.config.participants.turn_details
    turn = (
        ", and each turn's METEOR with your answer's matched words marked (the scoring output's "
        "`details.csv` holds the same figures)."
        if details
        else "; it shows no per-turn figure."
    )
    return f"""## What you see after scoring

The leaderboard shows the integral score, METEOR, the hidden metric and the score of each dialogue type,
with {c.decimals} decimals. The detailed results page shows the per-type table with its counts, the
warnings and the run's signature{turn} It never shows the test set's answers.
"""


def _which_en(c: Competition) -> str:
    return "development" if c.final is not None else "test"


def _overview_en(c: Competition) -> str:
    intro = f"""# {c.title}

Models hold dialogues that mix text, images and audio, and answer every user turn in Russian.
"""
    if c.code:
        return f"""{intro}
You upload your model's code: the platform runs it on the {_which_en(c)} dialogues to get
its answers and its perplexities of each turn's target answer.

{_phases_en(c)}
{_protocol_en(c)}

{_time_limits_en(c)}

{_image_en(c)}

{_local_run_en(c)}

{_seen_en(c)}"""
    return f"""{intro}
For each turn of the test dialogues you submit the model's answer and the model's perplexity
of that turn's target answer given the dialogue so far.

{_phases_en(c)}
The scoring of an upload may take at most {c.platform.execution_time_limit:,} s.

## What to submit

One upload: the two files below, or one `.zip` holding them (at its root or in one folder).

- `{SUBMISSION}`: one JSON object a line, one line per dialogue of `{DIALOGUES}`:
  `{{"dialog_id": "d-0001", "answers": ["first turn's answer", "second turn's answer"]}}`.
  Every dialogue exactly once, one string per turn (an empty string is allowed and scores 0).
- `{PPL}`: one JSON object mapping each dialog_id to its turns' perplexities:
  `{{"d-0001": [3.71, 5.2]}}`. Every value a finite number of at least 1.

The starting kit holds an example of both files.

## Check your files before you upload

{_how_to_check(c, "my_submission.zip")}

It lists every error with its file, line, dialog_id and turn, and says `valid` when the
upload will be scored. An invalid upload is not scored: the platform shows the same list
in the scoring log and on the submission's detailed results.

{_seen_en(c)}"""


_STAGES_EN = {
    "exact": "equal words",
    "lemma": "words sharing a lemma (pymorphy3)",
    "synonym": "synonyms (RuWordNet)",
}


def _meteor_en(c: Competition) -> str:
    m = c.config.meteor
    stages = [_STAGES_EN.get(s, f"the organizers' stage `{s}`") for s in m.stages]
    order = "in one stage" if len(stages) == 1 else "in stages, in this order"
    if m.gamma > 0:
        penalty = f"""The matched words form chunks: runs of words adjacent, and in the same order, in both
texts. With c chunks the fragmentation penalty is Pen = gamma (c / m)^beta, gamma = {m.gamma:g},
beta = {m.beta:g}, and METEOR = Fmean (1 - Pen)."""
    else:
        penalty = "There is no fragmentation penalty (gamma = 0): METEOR = Fmean."
    return f"""- **METEOR** for Russian: the answer against every reference variant of the turn; the
  turn's value is the best over its variants. Texts are normalised (Unicode NFKC, lower
  case, `ё` as `е`) and split into words. Words are matched {order}:
  {_list("en", stages)}. With m matched words,
  t words in the answer and r in the reference, P = m / t, R = m / r and
  Fmean = P R / (alpha P + (1 - alpha) R), alpha = {m.alpha:g}.
  {penalty.replace(chr(10), chr(10) + "  ")}"""


def _evaluation_en(c: Competition) -> str:
    weights = "\n".join(f"| `{t}` | {c.config.weights[t]:g} |" for t in c.types)
    command = _explain_command(c, "your answer", "a reference")
    explain = (
        f"""
To see how one answer is scored, word by word, with the scorer (the overview says how to get it) and
this competition's settings:

    {command}
"""
        if command
        else ""
    )
    return f"""# Evaluation

Every answered turn gets two numbers, each in [0, 1]:

{_meteor_en(c)}
- **The hidden metric**: a number derived from the perplexity of the turn's target answer
  that your model reports; a lower perplexity gives a higher value.

A dialogue's score is (its mean METEOR + its mean hidden metric) / 2; a type's score is
the mean over its dialogues; the **integral score**, which ranks the leaderboard, is the
weighted mean of the types' scores (the weights renormalised over the types present):

| dialogue type | weight |
| --- | --- |
{weights}

The perplexities must be the model's own: the organizers may recompute them for a sample
of turns with your model and compare.
{explain}"""


def _data_en(c: Competition) -> str:
    dev = c.development
    rows = "\n".join(f"| `{t}` | {dev.count(t)[0]:,} | {dev.count(t)[1]:,} |" for t in c.types)
    final = c.final
    held = (
        f"""
The final's dialogues are held out: {len(final.dialogues):,} dialogues, {final.turns:,} turns of the same
types, never published; the organizers run your code on them (see the overview).
"""
        if final is not None
        else ""
    )
    media = (
        """
The content of an `image` or `audio` part is the path of its file in `public_data/`, beside
`dialogues.jsonl`: `images/0001.jpg` is `public_data/images/0001.jpg`.
"""
        if dev.media
        else ""
    )
    limits = c.config.limits
    return f"""# Data

`public_data/{DIALOGUES}` holds the {"development" if final is not None else "test"} dialogues, one a line:

    {{"dialog_id": "d-0001", "type": "Image2Text", "turns": [[{{"type": "text", "content": "..."}},
      {{"type": "image", "content": "images/0001.jpg"}}]]}}

Every user turn is a list of parts of type `text`, `image` or `audio`. The reference
answers are kept by the organizers.
{media}
| type | dialogues | turns |
| --- | ---: | ---: |
{rows}
{held}
Limits: each file at most {limits.max_file_mib} MiB, each answer at most
{limits.max_answer_chars:,} characters. Files are UTF-8 JSON; `NaN` and `Infinity`
are not numbers here.
"""


def _final_overview_en(c: Competition) -> str:
    final = c.task
    end = c.development_end()
    assert end is not None
    return f"""# {final_title(c)}

This competition is the organizers' own: **never publish it, and add no participant.** It holds the
held-out dialogues of "{c.title}" ({len(final.dialogues):,} dialogues, {final.turns:,} turns), which no
team has met: the public competition ran on the development dialogues alone.

## How the final is run

From {_day(final_start(c))} (the development phase closed on {_day(end)} at 23:59:59 UTC), for each team:
download {_selected(c)} from the public competition (its submissions view, as an administrator, or the
platform's API), and upload it here under the team's name (put the team's name in the upload's
description). This leaderboard keeps every upload, one row each (`Force_Latest_Multiple`), with no
upload limit, so every team's upload stands on it.

Each upload runs the same two steps with the same image, queue and time limits as in the public
competition. You see every log and output here; no team sees anything. Rank the teams with the scorer's
`leaderboard` over the outputs (its audit, intervals and paired tests), as the organizers' guide says,
and publish the ranking. An upload whose code fails on the held-out dialogues is invalid, with its fault;
run one again only where the platform, not the code, failed.

{_time_limits_en(c)}
"""


def _final_data_en(c: Competition) -> str:
    final = c.task
    rows = "\n".join(f"| `{t}` | {final.count(t)[0]:,} | {final.count(t)[1]:,} |" for t in c.types)
    return f"""# Data

The held-out dialogues, drawn from the organizers' data with seed {c.platform.seed} and share
{c.platform.final_share} of each type. They are in this competition's input data (without answers) and
reference data (with them); never publish either.

| type | dialogues | turns |
| --- | ---: | ---: |
{rows}
"""


def _terms_en(c: Competition) -> str:
    lines = [
        "# Terms",
        "",
        "- Submissions are scored automatically; the organizers may disqualify an entry whose",
        "  perplexities are not those of the submitted model.",
        "- The reference answers stay private; do not try to obtain them.",
    ]
    if c.code:
        lines += [
            "- Do not make an upload fail on purpose (to learn from whether, where or when the run fails",
            "  anything of the hidden data): the organizers review teams whose runs fail, and may",
            "  disqualify a team that does it.",
        ]
    if c.final is not None:
        lines += [
            "- The final ranking is the organizers' run of each team's selected development upload on the",
            "  held-out dialogues, after the development phase closes; the organizers publish it. An upload",
            "  whose code fails on the held-out dialogues is listed invalid with its fault: the organizers",
            "  run it again only where the platform, not the code, failed.",
        ]
    lines += ["- By submitting you agree that your scores and team name appear on the leaderboard.", ""]
    return "\n".join(lines)


def _explain_command(c: Competition, candidate: str, reference: str) -> str | None:
    """``explain`` with this competition's METEOR settings, or None when its options cannot give its
    stages."""
    m = c.config.meteor
    flags = {("exact", "lemma", "synonym"): "", ("exact", "lemma"): " --no-synonyms"}
    if m.stages not in flags:
        return None
    return (
        f'python -m scorer explain --candidate "{candidate}" --reference "{reference}" '
        f"--alpha {m.alpha:g} --beta {m.beta:g} --gamma {m.gamma:g}{flags[m.stages]}"
    )


# --- Russian ----------------------------------------------------------------------------------------------


def _ru(n: int, one: str, few: str, many: str) -> str:
    """``n`` and the Russian noun's form for it: 1 диалог, 2 диалога, 5 диалогов (thousands spaced)."""
    tens, units = n % 100, n % 10
    form = many if 11 <= tens <= 14 else one if units == 1 else few if 2 <= units <= 4 else many
    return f"{_n(n)} {form}".replace(",", "\u00a0")


def _n(n: int) -> str:
    """A number as Russian writes it: thousands set off by a no-break space."""
    return f"{n:,}".replace(",", "\u00a0")


def _ru_dialogues(n: int) -> str:
    return _ru(n, "диалог", "диалога", "диалогов")


def _ru_turns(n: int) -> str:
    return _ru(n, "реплика", "реплики", "реплик")


def _phases_ru(c: Competition) -> str:
    p = c.platform
    rule = _RULES["ru"][p.submission_rule]
    per_day, total = p.max_submissions_per_day, p.max_submissions
    limits = f"""Каждая команда может загружать посылки {per_day} раз в день и {total}
раз всего (посылка, запуск которой завершился ошибкой, не считается); правило таблицы результатов:
{rule}."""
    final = c.final
    if final is None:
        return f"""## Этап и ограничения

Этап начинается {_day(p.development_start)} в 00:00 UTC и не имеет конца. {limits}
"""
    dev, end = c.development, c.development_end()
    assert end is not None
    return f"""## Этап, ограничения и финал

1. **Разработка**, с {_day(p.development_start)} 00:00:00 UTC по {_day(end)} 23:59:59 UTC: ваш код
   запускается на диалогах этапа разработки ({_ru_dialogues(len(dev.dialogues))}, {_ru_turns(dev.turns)};
   они лежат в `public_data/`), результаты попадают в таблицу этого соревнования. {limits}
2. **Финал**, с {_day(final_start(c))}, проводят организаторы: команды в него ничего не загружают.
   После закрытия этапа разработки они запускают посылку каждой команды ({_selected(c)}) на
   отложенных диалогах ({_ru_dialogues(len(final.dialogues))}, {_ru_turns(final.turns)} тех же типов,
   они никогда не публикуются) с тем же образом, ограничениями времени и шагами — на серверах
   платформы или в образе соревнования на своих машинах без сети. Ничто об отложенных диалогах и о
   том, как код команды на них отработал, не доходит ни до одной команды, пока организаторы не
   опубликуют итоговый рейтинг; они публикуют его, когда отработают посылки всех команд. Посылка, чей
   код завершился ошибкой на отложенных диалогах, считается недействительной, с указанием ошибки;
   организаторы запускают посылку повторно, только если сбой был у платформы, а не в коде.
"""


def _time_table_ru(c: Competition) -> str:
    p = c.platform
    rows = []
    for task in c.timed:
        name = word("ru", task.phase)
        rows.append(f"| {name} | генерация | {_ru_turns(task.turns)} | {_n(task.seconds(p, False))} |")
        rows.append(
            f"| {name} | оценка | {_ru_turns(task.turns)} + {_ru(task.probes, 'проба', 'пробы', 'проб')} "
            f"| {_n(task.seconds(p, True))} |"
        )
    return "\n".join(rows)


def _time_limits_ru(c: Competition) -> str:
    p = c.platform
    return f"""## Ограничения времени

Каждый из двух шагов на платформе, генерация ответов и оценка (на которой считаются ваши перплексии),
длится не дольше {_n(p.execution_time_limit)} с (`execution_time_limit` этапа). Внутри шага исполнитель
останавливает ваш код и называет ошибку, если `setup_model_and_tokenizer` работает дольше
{_n(p.setup_timeout)} с, если один вызов `generate_text` или `get_ppl` работает дольше {_n(p.turn_timeout)} с
и если весь шаг (загрузка и все вызовы) длится дольше {_n(p.step_timeout)} с: так у платформы остаётся
время завершить шаг. После загрузки за {_n(p.setup_timeout)} с у вашего кода в среднем на вызов есть
(шаг {_n(p.step_timeout)} с минус загрузка) / число вызовов, с округлением вниз:

| этап | шаг | вызовы | секунд на вызов в среднем |
| --- | --- | ---: | ---: |
{_time_table_ru(c)}

Более быстрая загрузка оставляет больше времени. На шаге оценки `get_ppl` вызывается ещё и для
некоторых реплик с переставленными словами эталонного ответа (пробы в таблице): так организаторы
проверяют, что перплексии даёт языковая модель; на оценку это не влияет. Шаг, который длится дольше
{_n(p.execution_time_limit)} с, платформа прерывает, и посылка не оценивается."""


def _image_ru(c: Competition) -> str:
    packages = c.platform.packages
    listed = (
        "Кроме стандартной библиотеки Python, ваш код может импортировать там эти пакеты: "
        + ", ".join(f"`{name}`" for name in packages)
        + "."
        if packages
        else "Какие пакеты Python (и каких версий) ваш код может там импортировать, спросите организаторов."
    )
    return f"""## Где работает ваш код

Оба шага запускают ваш код в образе соревнования `{c.image}`. {listed} Кладите веса модели в посылку,
только если они невелики; большие попросите организаторов добавить в образ.{_network_ru(c)}
Исключение, неверное значение, отсутствующая функция, вызов дольше лимита или упавший процесс
останавливают запуск, и посылка не оценивается. На шаге генерации журнал называет ошибку (функцию,
диалог и реплику); на шаге оценки, где доступны скрытые ответы, он пишет только
`the team's code failed in the scoring step`."""


def _network_ru(c: Competition) -> str:
    if c.offline:
        return " Шаги идут без доступа к сети: запуск, который находит сеть, останавливается до старта кода."
    return " Шаги могут идти с доступом к сети; не полагайтесь на него."


def _protocol_ru(c: Competition) -> str:

    return f"""## Что загружать

Один `.zip` с пакетом `team_code/` (папка с `__init__.py`) в корне или в одной папке верхнего
уровня. Его модуль `team_code/generate.py` определяет три функции:

    setup_model_and_tokenizer() -> (model, tokenizer)
    generate_text(model, tokenizer, cur_query_list, history_list) -> str
    get_ppl(model, tokenizer, cur_query_tuple, history_list) -> float

Платформа запускает ваш код дважды, каждый раз в новом процессе со своим вызовом
`setup_model_and_tokenizer()`:

1. **Генерация**, для каждого диалога по порядку и каждой реплики i: `generate_text(model, tokenizer,
   q_i, [(q_0, a_0), ..., (q_(i-1), a_(i-1))])`, где `q_i` — список частей реплики, как в
   `dialogues.jsonl` (`{{"type": "text"|"image"|"audio", "content": ...}}`, пути к медиафайлам
   абсолютные), а `a_k` — ваши предыдущие ответы. Верните `str` (у кортежа берётся первый элемент).
2. **Перплексия**, когда все ответы уже записаны: `get_ppl(model, tokenizer, (q_i, t_i),
   [(q_0, t_0), ..., (q_(i-1), t_(i-1))])`, где `t_k` — эталонный ответ реплики. Верните
   действительное число, конечное и не меньше 1 (`int`, `float` или скаляр numpy).

Изображения и аудиофайлы, которые называют диалоги, лежат в `public_data/` рядом с
`dialogues.jsonl`, по путям из диалогов.

Полный пример — `team_code/generate.py` из стартового набора:

```python
{KIT_GENERATE.strip()}
```"""


def _local_run_ru(c: Competition) -> str:

    p, local = c.platform, _local_command(c)
    return f"""## Сначала запустите код у себя

    {local}

Исполнитель (`starting_kit/runner.py`: один файл, Python 3.8 или новее, без зависимостей) вызывает
ваши функции так же, как платформа, и называет каждую ошибку; `--setup-timeout {p.setup_timeout}
--turn-timeout {p.turn_timeout} --step-timeout {p.step_timeout}` — ограничения платформы (без них
исполнитель даёт 3 600 с на загрузку, 600 с на вызов и не ограничивает шаг), `--resume` продолжает
остановленный запуск. Без скрытых ответов перплексии считаются по собственным ответам модели.

Затем проверьте записанные файлы командой оценщика `validate`, как это сделает платформа.

{_how_to_check(c, RUN_FOLDER, f"`{RUN_FOLDER}/`")}"""


def _seen_ru(c: Competition) -> str:
    if c.code:
        return f"""## Что вы видите после оценки

Журнал оценки и таблицу результатов: интегральную оценку, METEOR, скрытую метрику и оценку
каждого типа диалогов, каждое число округлено до {c.decimals} знаков после запятой. Выходная папка
шага оценки и подробные результаты в этом соревновании скрыты (там ваш код работает рядом со
скрытыми ответами). Ничто из показанного не содержит ответов тестового набора.
"""
    details = c.config.participants.turn_details
    turn = (
        ", а также METEOR каждой реплики с отмеченными совпавшими словами вашего ответа (те же числа — в "
        "`details.csv` в выходных данных оценки)."
        if details
        else "; чисел по отдельным репликам там нет."
    )
    return f"""## Что вы видите после оценки

Таблица результатов показывает интегральную оценку, METEOR, скрытую метрику и оценку каждого типа
диалогов, с {c.decimals} знаками после запятой. Страница подробных результатов показывает таблицу по
типам с числом диалогов и реплик, предупреждения и подпись запуска{turn} Ответов тестового набора
она никогда не показывает.
"""


def _which_ru(c: Competition) -> str:
    return "диалогах этапа разработки" if c.final is not None else "тестовых диалогах"


def _overview_ru(c: Competition) -> str:
    intro = f"""# {c.title}

Модели ведут диалоги, в которых смешаны текст, изображения и аудио, и отвечают на каждую реплику
пользователя по-русски.
"""
    if c.code:
        return f"""{intro}
Вы загружаете код своей модели: платформа запускает его на {_which_ru(c)} и
получает его ответы и перплексии эталонного ответа каждой реплики.

{_phases_ru(c)}
{_protocol_ru(c)}

{_time_limits_ru(c)}

{_image_ru(c)}

{_local_run_ru(c)}

{_seen_ru(c)}"""
    return f"""{intro}
Для каждой реплики тестовых диалогов вы присылаете ответ модели и перплексию, которую модель
даёт эталонному ответу этой реплики с учётом предыдущего диалога.

{_phases_ru(c)}
Оценка одной посылки длится не дольше {_n(c.platform.execution_time_limit)} с.

## Что присылать

Одна посылка: два файла ниже или один `.zip` с ними (в корне или в одной папке).

- `{SUBMISSION}`: по одному объекту JSON в строке, по строке на каждый диалог `{DIALOGUES}`:
  `{{"dialog_id": "d-0001", "answers": ["ответ на первую реплику", "ответ на вторую реплику"]}}`.
  Каждый диалог ровно один раз, по одной строке на реплику (пустая строка допустима и даёт 0).
- `{PPL}`: один объект JSON, сопоставляющий каждому dialog_id перплексии его реплик:
  `{{"d-0001": [3.71, 5.2]}}`. Каждое значение — конечное число не меньше 1.

В стартовом наборе есть пример обоих файлов.

## Проверьте файлы перед загрузкой

{_how_to_check(c, "my_submission.zip")}

Команда перечисляет все ошибки с файлом, строкой, dialog_id и репликой и пишет `valid`, если
посылка будет оценена. Неверная посылка не оценивается: платформа показывает тот же список в
журнале оценки и в подробных результатах посылки.

{_seen_ru(c)}"""


_STAGES_RU = {
    "exact": "совпадающие слова",
    "lemma": "слова с общей леммой (pymorphy3)",
    "synonym": "синонимы (RuWordNet)",
}


def _meteor_ru(c: Competition) -> str:
    m = c.config.meteor
    stages = [_STAGES_RU.get(s, f"этап организаторов `{s}`") for s in m.stages]
    if m.gamma > 0:
        penalty = f"""Совпавшие слова образуют фрагменты: цепочки слов, идущих подряд и в том же порядке в
обоих текстах. При c фрагментах штраф за фрагментацию Pen = gamma (c / m)^beta, gamma = {m.gamma:g},
beta = {m.beta:g}, и METEOR = Fmean (1 - Pen)."""
    else:
        penalty = "Штрафа за фрагментацию нет (gamma = 0): METEOR = Fmean."
    order = "в один этап" if len(stages) == 1 else "по этапам, в таком порядке"
    return f"""- **METEOR** для русского языка: ответ сравнивается с каждым вариантом эталона реплики;
  значение реплики — лучшее по вариантам. Тексты нормализуются (Unicode NFKC, нижний регистр,
  `ё` как `е`) и делятся на слова. Слова сопоставляются {order}: {_list("ru", stages)}. При m
  совпавших словах, t словах в ответе и r в эталоне P = m / t, R = m / r и
  Fmean = P R / (alpha P + (1 - alpha) R), alpha = {m.alpha:g}.
  {penalty.replace(chr(10), chr(10) + "  ")}"""


def _evaluation_ru(c: Competition) -> str:
    weights = "\n".join(f"| `{t}` | {c.config.weights[t]:g} |" for t in c.types)
    command = _explain_command(c, "ваш ответ", "эталонный ответ")
    explain = (
        f"""
Как оценивается один ответ, слово за словом, покажет оценщик (как его получить, сказано в обзоре) с
настройками этого соревнования:

    {command}
"""
        if command
        else ""
    )
    return f"""# Оценка

Каждая реплика с ответом получает два числа, каждое в [0, 1]:

{_meteor_ru(c)}
- **Скрытая метрика**: число, которое выводится из перплексии эталонного ответа реплики,
  которую сообщает ваша модель; чем ниже перплексия, тем выше значение.

Оценка диалога — (его средний METEOR + его средняя скрытая метрика) / 2; оценка типа — среднее
по его диалогам; **интегральная оценка**, по которой упорядочена таблица результатов, — взвешенное
среднее оценок типов (веса нормируются по присутствующим типам):

| тип диалога | вес |
| --- | --- |
{weights}

Перплексии должны быть перплексиями вашей модели: организаторы могут пересчитать их вашей
моделью для выборки реплик и сравнить.
{explain}"""


def _data_ru(c: Competition) -> str:
    dev = c.development
    rows = "\n".join(f"| `{t}` | {_n(dev.count(t)[0])} | {_n(dev.count(t)[1])} |" for t in c.types)
    final = c.final
    held = (
        f"""
Диалоги финала отложены: {_ru_dialogues(len(final.dialogues))}, {_ru_turns(final.turns)} тех же
типов; они не публикуются, организаторы запускают на них ваш код (см. обзор).
"""
        if final is not None
        else ""
    )
    media = (
        """
Содержимое части типа `image` или `audio` — путь к её файлу в `public_data/`, рядом с
`dialogues.jsonl`: `images/0001.jpg` — это `public_data/images/0001.jpg`.
"""
        if dev.media
        else ""
    )
    limits = c.config.limits
    which = "диалоги этапа разработки" if final is not None else "тестовые диалоги"
    return f"""# Данные

В `public_data/{DIALOGUES}` лежат {which}, по одному в строке:

    {{"dialog_id": "d-0001", "type": "Image2Text", "turns": [[{{"type": "text", "content": "..."}},
      {{"type": "image", "content": "images/0001.jpg"}}]]}}

Каждая реплика пользователя — список частей типа `text`, `image` или `audio`. Эталонные
ответы хранятся у организаторов.
{media}
| тип | диалогов | реплик |
| --- | ---: | ---: |
{rows}
{held}
Ограничения: каждый файл не больше {limits.max_file_mib} МиБ, каждый ответ не длиннее
{_n(limits.max_answer_chars)} символов. Файлы — JSON в UTF-8; `NaN` и `Infinity` здесь
не числа.
"""


def _final_overview_ru(c: Competition) -> str:
    final = c.task
    end = c.development_end()
    assert end is not None
    return f"""# {final_title(c)}

Это соревнование — только для организаторов: **никогда не публикуйте его и не добавляйте участников.**
В нём отложенные диалоги соревнования «{c.title}» ({_ru_dialogues(len(final.dialogues))},
{_ru_turns(final.turns)}), которых не видела ни одна команда: открытое соревнование шло только на
диалогах этапа разработки.

## Как провести финал

С {_day(final_start(c))} (этап разработки закрылся {_day(end)} в 23:59:59 UTC) для каждой команды:
скачайте из открытого соревнования её посылку ({_selected(c)}) — в списке посылок, как
администратор, или через API платформы — и загрузите её сюда под названием команды (в описании
посылки). Эта таблица хранит каждую посылку отдельной строкой (`Force_Latest_Multiple`), без
ограничения числа посылок, так что в ней стоит посылка каждой команды.

Каждая посылка проходит те же два шага с тем же образом, очередью и ограничениями времени, что и в
открытом соревновании. Вы видите здесь все журналы и выходные файлы; команды не видят ничего.
Ранжируйте команды командой `leaderboard` оценщика по выходным файлам (с аудитом, интервалами и
парными тестами), как сказано в руководстве организатора, и опубликуйте рейтинг. Посылка, чей код
завершился ошибкой на отложенных диалогах, недействительна, с указанием ошибки; запускайте посылку
повторно, только если сбой был у платформы, а не в коде.

{_time_limits_ru(c)}
"""


def _final_data_ru(c: Competition) -> str:
    final = c.task
    rows = "\n".join(f"| `{t}` | {_n(final.count(t)[0])} | {_n(final.count(t)[1])} |" for t in c.types)
    return f"""# Данные

Отложенные диалоги, отобранные из данных организаторов с зерном {c.platform.seed} и долей
{c.platform.final_share} каждого типа. Они лежат во входных данных этого соревнования (без ответов) и
в эталонных данных (с ответами); не публикуйте ни те, ни другие.

| тип | диалогов | реплик |
| --- | ---: | ---: |
{rows}
"""


def _terms_ru(c: Competition) -> str:
    lines = [
        "# Условия",
        "",
        "- Посылки оцениваются автоматически; организаторы могут дисквалифицировать участника, чьи",
        "  перплексии не принадлежат присланной модели.",
        "- Эталонные ответы закрыты; не пытайтесь их получить.",
    ]
    if c.code:
        lines += [
            "- Не делайте посылки, которые намеренно завершаются ошибкой (чтобы по тому, упал ли запуск,",
            "  где и когда, узнать что-либо о скрытых данных): организаторы проверяют команды, чьи запуски",
            "  завершаются ошибкой, и могут дисквалифицировать команду, которая так делает.",
        ]
    if c.final is not None:
        lines += [
            "- Итоговый рейтинг — запуск организаторами выбранной посылки каждой команды с этапа разработки",
            "  на отложенных диалогах после закрытия этапа разработки; его публикуют организаторы. Посылка,",
            "  чей код завершился ошибкой на отложенных диалогах, считается недействительной, с указанием",
            "  ошибки: организаторы запускают её повторно, только если сбой был у платформы, а не в коде.",
        ]
    lines += [
        "- Отправляя посылку, вы соглашаетесь, что ваши результаты и название команды будут в таблице.",
        "",
    ]
    return "\n".join(lines)
