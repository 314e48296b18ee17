"""Mobile hosts that are an outlet's desktop host for ``canonical_url`` (issue 12, point 4).

An explicit list, not a rule: m.example.com is not www.example.com in general. A host is listed
where the outlet's articles have the same path on both hosts, as public links to them show (an
example of each beside it, found with the search tool); otherwise it goes to NOT_ALIASED with
the reason. An article path the two hosts do not share (an older mobile path, an AMP page such
as m.yna.co.kr/amp/view/…) keeps its own key: the alias changes the host, never the path, and
the extraction issue links AMP pages to their article through the page's canonical link.

Bump HOST_ALIASES_VERSION with any change to HOST_ALIASES: the keys of links on those hosts
change with it, and a link stored under the old key is not found under the new one.
"""

from __future__ import annotations

HOST_ALIASES_VERSION = 1

HOST_ALIASES = {
    # m.yna.co.kr/view/AKR20210310060200054, www.yna.co.kr/view/AKR20220913051600009
    "m.yna.co.kr": "www.yna.co.kr",
    # mobile.newsis.com/view/NISX20260206_0003505448, www.newsis.com/view/NISX20231201_0002542495
    # (the older mobile.newsis.com/view.html?ar_id= and www.newsis.com/view/?id= differ: apart)
    "mobile.newsis.com": "www.newsis.com",
    # m.hani.co.kr/arti/society/environment/954997.html,
    # www.hani.co.kr/arti/society/environment/1050887.html
    "m.hani.co.kr": "www.hani.co.kr",
    # m.khan.co.kr/national/court-law/article/202107211640001,
    # www.khan.co.kr/national/court-law/article/202212262109015
    # (the older m.khan.co.kr/view.html?art_id= differs: apart)
    "m.khan.co.kr": "www.khan.co.kr",
    # m.mk.co.kr/news/stock/11160843, www.mk.co.kr/news/stock/11999494
    "m.mk.co.kr": "www.mk.co.kr",
    # m.hankookilbo.com/News/Read/A2022071811470005505,
    # www.hankookilbo.com/News/Read/A2021041509290000151
    "m.hankookilbo.com": "www.hankookilbo.com",
    # 중앙일보's joins.com hosts: mnews.joins.com/article/24102866, news.joins.com/article/23587906
    "mnews.joins.com": "news.joins.com",
}

# Mobile hosts left apart from their desktop host, and why.
NOT_ALIASED = {
    "mnews.jtbc.co.kr": "/News/Article.aspx?news_id= there, /article/article.aspx?news_id= on"
    " news.jtbc.co.kr: the path's case differs, and the key keeps it",
    "m.chosun.com": "/svc/article.html?sname=…&contid=… there; www.chosun.com names an article"
    " by section and date",
    "m.donga.com": "no article link on it found to compare",
    "m.hankyung.com": "no article link on it found to compare",
    "m.news.sbs.co.kr": "/news/endPage.do seen without its news_id: not enough to compare",
    "m.imnews.imbc.com": "no article link on it found to compare",
}
