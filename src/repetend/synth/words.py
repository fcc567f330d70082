"""Word lists and block texts for the web-like generator (English and Russian).

The common-word lists are in rough frequency order, so a Zipfian draw over
their ranks looks like running text; :func:`pseudo_words` extends them with a
long tail of invented words so that chance repeats of long phrases stay rare.
Everything here is plain data: the generator in :mod:`repetend.synth.weblike`
decides how it is combined.
"""

from __future__ import annotations

import numpy as np

__all__ = ["COMMON", "FIRST_NAMES", "LAST_NAMES", "MENU_ITEMS", "SECTIONS", "COMPANY_PARTS",
           "MONTHS", "SHARED_BLOCKS", "SITE_BLOCKS", "SLOT_TEMPLATES", "pseudo_words"]

_EN = """
the of and to in a is that for it as was with be by on not he this are or his from at which
but have an they you were her she there been one all we their has would when if so no will
more who also can its out about up into them than only other new some could time these two may
then do first any my now such like our over man me even most made after well did many before
must through back years where much your way down should because each just those people how too
little state good very make world still own see men work long get here between both life being
under never day same another know while last might us great old year off come since against go
came right used take three states himself few house use during without again place american
around however home small found thought went say part once general high upon school every does
got united left number course war until always away something fact though water less public put
think almost hand enough far took head yet government system better set told nothing night end
why called eyes find going look asked later point knew city next program business give group
toward young days let room president side social present given several order national possible
rather second face per among form important often things looked early white case john become large
big need four within felt along children saw best church ever least power development light thing
seemed family interest want members mind country area others done turned although open problem
sense service certain kind began thus help means whole matter perhaps itself york times human law
line above name example action company hands local show whether five history gave today either
act feet across taken past quite anything having seen death experience body word half really field
am week car words doing himself market price money report study research data page index search
""".split()

_RU = """
и в не на я быть он с что а по это она этот к но они мы как из у который то за свой что весь
год от так о для ты же все тот мочь вы человек такой его сказать только или ещё бы себя один
как уже до время если сам когда другой вот говорить наш мой знать стать при чтобы дело жизнь
кто первый очень два день её новый рука даже во со раз где там под можно ну какой после их
работа без самый потом надо хотеть ли слово идти большой должен место иметь ничто то сейчас
тут лицо каждый друг нет теперь ни глаз тоже тогда видеть вопрос через да здесь дом да потому
сторона какой-то думать сделать страна жить чем мир об последний случай голова более делать
что-то смотреть ребёнок просто конечно сила российский конец перед несколько вид система
всегда работать между три деньги значит получить пойти никогда город земля лишь часть два
район рынок цена компания проект развитие область процесс решение результат услуга клиент
товар заказ доставка оплата магазин каталог новость статья материал информация сайт страница
поиск данные отчёт исследование вода дорога история совет власть закон право книга война
общество машина ночь утро вечер люди школа улица окно путь форма уровень условие центр
программа возможность группа работник директор предприятие начало средство число отношение
мнение задача пример вариант качество рост план действие момент образ правило сумма срок
хороший главный большой новый старый последний высокий русский полный общий важный белый
известный нужный лучший целый простой сильный разный трудный настоящий свободный живой
понимать говорить найти любить спросить писать читать сидеть стоять ждать жить помнить
начать понять взять остаться показать ответить решить помочь проводить создать вести
семья мать отец сын сердце свет мысль нога неделя месяц причина система порядок сеть
около почти вместе сразу снова давно именно особенно поэтому хотя например однако также
""".split()

COMMON: dict[str, list[str]] = {}
for _lang, _words in (("en", _EN), ("ru", _RU)):
    _seen: set[str] = set()
    COMMON[_lang] = [w for w in _words if not (w in _seen or _seen.add(w))]

_SYLLABLES = {
    "en": ("ba be bi bo bu ca co cu da de di do fa fe fi fo ga ge go gu ha he hi ho ka ke ki ko "
           "la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po ra re ri ro ru sa se si so "
           "su ta te ti to tu va ve vi vo za ze zo ster ton ment ing ly ar er or al").split(),
    "ru": ("ба бе би бо бу ва ве ви во га ге го гу да де ди до ду жа же жи за зе зи зо ка ке ки ко "
           "ку ла ле ли ло лу ма ме ми мо му на не ни но ну па пе пи по пу ра ре ри ро ру са се "
           "си со су та те ти то ту фа фе ха хо ца че чи ша ши ще ость ение ник ка ный ская").split(),
}


def pseudo_words(lang: str, n: int, rng: np.random.Generator) -> list[str]:
    """*n* distinct invented words of 2–4 syllables, none of them a common word."""
    syl = np.array(_SYLLABLES[lang], dtype=object)
    common = set(COMMON[lang])
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        m = 2 * (n - len(out)) + 16
        k = rng.integers(2, 5, size=m)
        picks = syl[rng.integers(0, syl.size, size=(m, 4))]
        for row, kk in zip(picks, k):
            w = "".join(row[:kk])
            if w not in seen and w not in common:
                seen.add(w)
                out.append(w)
                if len(out) == n:
                    break
    return out


FIRST_NAMES = {
    "en": "James Mary Robert Linda Michael Sarah David Emily Daniel Laura Thomas Anna Peter Helen "
          "George Alice Steven Karen Brian Nancy Kevin Julia Mark Grace".split(),
    "ru": "Иван Мария Алексей Ольга Дмитрий Елена Сергей Анна Андрей Наталья Михаил Татьяна "
          "Николай Ирина Павел Светлана Владимир Юлия Артём Дарья".split(),
}
LAST_NAMES = {
    "en": "Smith Johnson Williams Brown Jones Miller Davis Wilson Moore Taylor Anderson Thomas "
          "Jackson White Harris Martin Thompson Clark Lewis Walker Young Allen".split(),
    "ru": "Иванов Петров Смирнов Кузнецов Попов Соколов Лебедев Козлов Новиков Морозов Волков "
          "Соловьёв Васильев Зайцев Павлов Семёнов Голубев Виноградов".split(),
}

MENU_ITEMS = {
    "en": ["Home", "News", "Catalog", "Products", "Services", "Blog", "About us", "Contacts",
           "Delivery", "Support", "Careers", "Shop", "Sale", "FAQ", "Partners", "Events"],
    "ru": ["Главная", "Новости", "Каталог", "Товары", "Услуги", "Блог", "О компании", "Контакты",
           "Доставка", "Поддержка", "Вакансии", "Магазин", "Акции", "Вопросы и ответы",
           "Партнёрам", "События"],
}
SECTIONS = {
    "en": ["news", "blog", "catalog", "articles", "products", "reviews", "guides"],
    "ru": ["novosti", "blog", "katalog", "stati", "tovary", "obzory", "sovety"],
}

COMPANY_PARTS = {
    "en": (["North", "Blue", "Bright", "Green", "Silver", "Rapid", "Prime", "Urban", "Golden",
            "Clear", "Smart", "True", "Red", "Star", "Open", "Nova"],
           ["field", "stone", "wave", "line", "point", "works", "soft", "market", "media",
            "trade", "bridge", "gate", "lab", "hub"],
           ["Inc", "LLC", "Ltd", "Group", "Media", "Company"]),
    "ru": (["Север", "Альфа", "Вектор", "Гранит", "Восток", "Меридиан", "Прогресс", "Сфера",
            "Орбита", "Радуга", "Лидер", "Форум", "Горизонт", "Стандарт", "Старт", "Ясень"],
           ["", "-М", " Плюс", "-Трейд", " Групп", "-Сервис", " Медиа", "Торг"],
           ["ООО", "АО", "ИП", "ГК"]),
}

MONTHS = {
    "en": ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"],
    "ru": ["января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа",
           "сентября", "октября", "ноября", "декабря"],
}

# Blocks shared across sites: a site on one of these "CMS"es shows its cookie banner and/or
# disclaimer verbatim, as real sites built from the same plugin do.
SHARED_BLOCKS = {
    "en": {
        "cookie": [
            "We use cookies to personalise content and ads, to provide social media features "
            "and to analyse our traffic. By continuing to use this website you consent to our "
            "use of cookies. Learn more. Accept all cookies.",
            "This website uses cookies to ensure you get the best experience on our website. "
            "Got it! More info.",
            "Cookies help us deliver our services. By using our services, you agree to our use "
            "of cookies. Manage preferences or Accept.",
        ],
        "disclaimer": [
            "The information on this website is provided for general informational purposes "
            "only and does not constitute legal, financial or professional advice. Prices and "
            "availability are subject to change without notice.",
            "All trademarks and registered trademarks appearing on this site are the property "
            "of their respective owners. Content may not be reproduced without written "
            "permission.",
            "Powered by SiteBuilder CMS. Terms of Use. Privacy Policy. Accessibility statement.",
        ],
    },
    "ru": {
        "cookie": [
            "Мы используем файлы cookie, чтобы сайт работал лучше. Продолжая пользоваться "
            "сайтом, вы соглашаетесь с использованием файлов cookie и политикой "
            "конфиденциальности. Подробнее. Принять.",
            "Этот сайт использует куки для хранения данных. Продолжая использовать сайт, вы "
            "даёте согласие на работу с этими файлами. Хорошо.",
            "Сайт использует cookie и сервисы веб-аналитики. Нажимая «Согласен», вы принимаете "
            "условия обработки персональных данных. Согласен.",
        ],
        "disclaimer": [
            "Информация на сайте носит справочный характер и не является публичной офертой. "
            "Цены и наличие товара уточняйте у менеджеров.",
            "Все права на материалы, размещённые на сайте, принадлежат их авторам. "
            "Использование материалов допускается только с письменного разрешения редакции.",
            "Сайт работает на платформе СайтКонструктор. Пользовательское соглашение. "
            "Политика конфиденциальности. Карта сайта.",
        ],
    },
}

# Site-specific blocks; {company} is filled with the site's company name.
SITE_BLOCKS = {
    "en": {
        "cookie": "{company} uses cookies to improve your experience. By continuing to browse "
                  "the site you agree to our use of cookies. Close.",
        "disclaimer": "{company} is not responsible for the content of external websites. "
                      "Opinions expressed by authors are their own.",
        "read_also": "Read also: {titles}",
        "subscribe": "Subscribe to the {company} newsletter and get the best stories every "
                     "week. Your email. Subscribe.",
    },
    "ru": {
        "cookie": "{company} использует файлы cookie для улучшения работы сайта. Оставаясь на "
                  "сайте, вы соглашаетесь с этим. Закрыть.",
        "disclaimer": "{company} не несёт ответственности за содержание внешних сайтов. Мнение "
                      "авторов может не совпадать с мнением редакции.",
        "read_also": "Читайте также: {titles}",
        "subscribe": "Подпишитесь на рассылку {company} и получайте лучшие материалы каждую "
                     "неделю. Ваш email. Подписаться.",
    },
}

# Templates with variable parts (slots in braces).  The footer and signature carry a
# per-site part as well, filled in before the per-page slots.
SLOT_TEMPLATES = {
    "en": {
        "footer": "© {year} {company}. All rights reserved.",
        "signature": "Posted by {author} on {date}",
        "listing": "Showing {first}–{last} of {total} items",
        "date": "{month} {day}, {year}",
    },
    "ru": {
        "footer": "© {year} {company}. Все права защищены.",
        "signature": "Автор: {author}, {date}",
        "listing": "Показано {first}–{last} из {total} товаров",
        "date": "{day} {month} {year}",
    },
}
