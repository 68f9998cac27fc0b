# نصوص الجهاز المحمول باللغة العربية. المصطلحات كما تُستخدم في المستودعات
# (انظر GLOSSARY.md)؛ الرموز والمواقع وأرقام EPC وقيم GS1 تأتي كوسائط
# ولا تُترجم أبدًا، ويعزلها المنسّق لتُقرأ من اليسار إلى اليمين.

## شريط الحالة والتنبيهات

bar-waiting = { $count ->
    [zero] في الانتظار
    [one] في الانتظار
    [two] في الانتظار
    [few] في الانتظار
    [many] في الانتظار
   *[other] في الانتظار
  }
bar-oldest = الأقدم { $age }
bar-attention = { $count } بانتظار قرار
bar-cache = البيانات { $age }
bar-cache-none = البيانات –
bar-cache-loading = البيانات: { $units } وحدة…
bar-label = { $figures }. يفتح قائمة الانتظار.
bar-label-waiting = في الانتظار: { $count }
net-refused = غير مسموح
net-no-site = لا مستودع
net-online = متصل
net-offline = غير متصل
menu-button = القائمة
    .aria-label = القائمة
worker-starting = جارٍ التشغيل…
worker-ready = جاهز
worker-not-secure = غير آمن: افتح المستودع عبر https:// (ثق أولًا بشهادة المستودع من ‎/trust.html).
worker-no-support = لا يدعم المتصفح عامل الخدمة: لا يمكن حفظ عمليات المسح دون اتصال.
banner-refused = لم يعد هذا الجهاز مسموحًا به في المستودع: اطلب من المشرف إعداده من جديد.
banner-refused-kept = تبقى كل عمليات المسح محفوظة على هذا الجهاز وتُرسل بعد إعداده من جديد.
banner-training = تدريب
banner-training-words = هذا الجهاز غير مُفعّل للتشغيل: يسجّل المستودع عمليات مسحه كتدريب ولا ينقل أي شيء.
late-show = اعرضها
late-seen = تمت الرؤية
release-reload = إعادة التحميل
reference-loading = جارٍ تحميل البيانات المرجعية: { $units } وحدة حتى الآن
reference-partial = البيانات المرجعية: { $units } وحدة حتى الآن؛ يستأنف التحميل من هناك
starting-placeholder = جارٍ التشغيل: المسح محفوظ
starting-words = جارٍ التشغيل: ما يُمسح الآن يُحفظ ويُقرأ بعد لحظة.

## المدد الزمنية

ago-seconds = { $n } ث
ago-minutes = { $n } د
ago-hours = { $n } س
ago-days = { $n } ي
ago-none = –

## إعداد الجهاز

setup-title = إعداد هذا الجهاز
setup-language = لغة هذا الجهاز
setup-language-operator = ما دام مشغّل يقرأ لغة أخرى مسجلاً دخوله، يتحدث الجهاز بلغته؛ وتعود هذه اللغة عند تسجيل الخروج.
setup-hint = افتح رابط الإعداد الذي تعرضه واجهة المستودع كرمز QR، أو أدخل القيم الثلاث التي طبعها { $command }.
setup-site-url = عنوان URL للمستودع
setup-device-id = معرّف الجهاز
setup-device-token = رمز الجهاز
setup-save = حفظ
setup-anyway = احفظ على أي حال: المستودع متوقف حاليًا
back = رجوع

## اختيار الوضع وتسجيل الدخول

picker-operator = المشغّل
operator-change = تغيير
operator-signout = تسجيل الخروج
picker-choose = اختر وضعًا
picker-sign-in = تسجيل الدخول
picker-scan-badge = امسح بطاقة المشغّل الخاصة بك
picker-scan-badge-first = امسح بطاقة المشغّل أولًا
picker-tap-mode = اضغط على وضع
picker-session-closed = أغلق المشرف هذه الجلسة في المستودع. لا يُحتسب أي مسح بعد ذلك: امسح بطاقتك لتبدأ من جديد.
picker-no-profile = لا يعرف هذا الجهاز ملفه التعريفي بعد: سيقرؤه من المستودع عند الاتصال.
picker-no-modes = الملف التعريفي { $profile } لا يشغّل أي وضع للجهاز المحمول.
picker-device = { $device } · { $profile }
picker-summary = أُغلق { $mode }: عمليات المسح { $count }، المُطبّقة { $applied }، المرفوضة { $refused }، بانتظار الإرسال { $waiting }. تعرض قائمة الانتظار كل واحدة منها.
picker-summary-undone = أُغلق { $mode }: عمليات المسح { $count }، المُطبّقة { $applied } (أُلغي منها { $undone })، المرفوضة { $refused }، بانتظار الإرسال { $waiting }. تعرض قائمة الانتظار كل واحدة منها.
session-open-failed = تعذّر فتح الجلسة: { $error }
sign-in-not-known = { $code } ليست بطاقة مشغّل يعرفها المستودع
sign-in-refused = { $why }: لم يتم تسجيل الدخول. امسح بطاقتك أنت.
signed-in = تم تسجيل الدخول: { $operator }
signed-out = سجّل { $operator } الخروج.
signed-out-idle = تم تسجيل الخروج بعد { $idle } دون مسح. امسح بطاقتك للمتابعة.
operator-label = { $name } ({ $badge })

## شاشة الوضع

mode-needs =
    .aria-label = ما يحتاجه هذا الوضع
results-label =
    .aria-label = آخر عمليات المسح
switch-mode = تبديل الوضع
close-session = إغلاق الجلسة
mode-need-missing = مطلوب:

## قائمة الانتظار

queue-title = قائمة الانتظار
queue-retry = أعد المحاولة الآن
queue-refresh = تحديث
queue-filters =
    .aria-label = عرض
queue-filter-all = الكل
queue-filter-decide = بانتظار قرار
queue-more = المزيد

## القائمة

menu-title = القائمة
menu-refresh = تحديث البيانات المرجعية
menu-commands = باركودات الأوامر
menu-setup = إعداد الجهاز
menu-idle = تسجيل الخروج بعد الخمول
menu-counts-legend = بجانب خانة المسح، منذ فتح هذه الصفحة: ✓ عمليات مسح سُجّلت على هذا الجهاز، ✗ عمليات مسح تعذّر حفظها (أعد مسحها)، ⊘ عمليات مسح رُدّت قبل التسجيل (يذكر كل سطر السبب). ما يرفضه المستودع لاحقًا يظهر في قائمة الانتظار.
menu-signals-on = الصوت والاهتزاز: تشغيل
menu-signals-off = الصوت والاهتزاز: إيقاف
menu-idle-minutes = { $n } د
menu-idle-hours = { $n } س
menu-not-set-up = غير مُعدّ.
menu-device = { $device } ← { $site }
menu-device-profile = { $device } · { $profile } ← { $site }
menu-device-encodes = { $device } · { $profile } · يرمّز ← { $site }
menu-reference = النسخة المرجعية: الوحدات { $units }، المواقع { $bins }، أذونات الاستلام { $grns }، مهام الجرد { $counts }؛ عمرها { $age }
menu-reference-loading = النسخة المرجعية: الوحدات { $units }، المواقع { $bins }، أذونات الاستلام { $grns }، مهام الجرد { $counts }؛ عمرها { $age } (جارٍ التحميل)
menu-reference-never = النسخة المرجعية: الوحدات { $units }، المواقع { $bins }، أذونات الاستلام { $grns }، مهام الجرد { $counts }؛ لم تكتمل قط
menu-reference-never-loading = النسخة المرجعية: الوحدات { $units }، المواقع { $bins }، أذونات الاستلام { $grns }، مهام الجرد { $counts }؛ لم تكتمل قط (جارٍ التحميل)
menu-reference-none = النسخة المرجعية: –
menu-reference-read = تمت قراءة البيانات المرجعية.
storage-persist-granted = تم منح التخزين الدائم.
storage-persist-advice = لم يُمنح التخزين الدائم: قد يمسح المتصفح ما يحفظه هذا الجهاز عند نفاد المساحة. أضف Stockhop إلى الشاشة الرئيسية (قائمة المتصفح ← تثبيت التطبيق أو الإضافة إلى الشاشة الرئيسية)، أو اسمح لهذا الموقع بتخزين البيانات من إعدادات المواقع في المتصفح، ثم افتح هذه القائمة مجددًا. حتى ذلك الحين، دع قائمة الانتظار تُفرغ قبل أن تنفد مساحة الجهاز.
storage-unavailable = تقدير التخزين غير متاح.
storage-estimate = المستخدم { NUMBER($used, maximumFractionDigits: 1, minimumFractionDigits: 1) } ميغابايت من { NUMBER($quota, maximumFractionDigits: 0) } ميغابايت

## خانة المسح والحوارات

dock-scan = مسح
dock-input =
    .placeholder = بانتظار الماسح
dock-counts =
    .aria-label = عمليات المسح منذ فتح هذه الصفحة (تشرحها القائمة)
dock-captured-title =
    .title = مُسجّلة
dock-captured = {" "}مُسجّلة
dock-failed-title =
    .title = تعذّر حفظها
dock-failed = {" "}تعذّر حفظها
dock-refused-title =
    .title = رُدّت قبل التسجيل
dock-refused = {" "}مردودة
alert-ack = تأكيد
alert-acknowledged = تم تأكيد التنبيه.
no-reply = لا رد

## عمليات مسح رُدّت قبل التسجيل

scan-answer-first = أجب عن السؤال أولًا: لم يُسجَّل { $code }.
scan-not-captured = لم يُسجَّل { $code }.
scan-again = امسحه مرة أخرى.
scan-no-constants = لم يُسجَّل: { $code }. لم يقرأ هذا الجهاز إعدادات المستودع بعد؛ أعد الاتصال بالمستودع وامسح مرة أخرى.
scan-alert-first = أكّد التنبيه أولًا: لم يُسجَّل { $code }.
scan-mode-first = اختر وضعًا أولًا: لم يُسجَّل { $code }.
scan-unknown-mode = وضع غير معروف { $mode }
scan-not-captured-why = لم يُسجَّل: { $error }
scan-badge-named = هذه بطاقة { $name } ({ $badge }): لم تُسجَّل.
scan-badge = هذه بطاقة المشغّل { $badge }: لم تُسجَّل.
scan-prompt-again = { $prompt }.
scan-nothing-to-confirm = لا شيء للتأكيد.
signed-out-close = سجّل { $operator } الخروج (CLOSE).
signed-out-nobody = لا أحد مسجّل الدخول.

## رأس شاشة الوضع

session-open = مفتوحة: { $operator } · { $session }
session-read-only = { $operator } · قراءة فقط
session-not-open = لم تُفتح بعد
scan-bin-units = الموقع { $bin }: امسح وحداته
scan-bin-first = امسح ملصق موقع أولًا.

## البحث عن وحدة

mode-find_unit = البحث عن وحدة
mode-find_unit-blurb = أين هي؟ من هذا الجهاز، حتى دون اتصال.
find-prompt = امسح وسمًا أو رقمًا تسلسليًا أو ملصق وحدة
find-prompt-small = الإجابة من هذا الجهاز
find-not-known = { $code }: غير معروف
find-age = من نسخة هذا الجهاز، عمرها { $age }.
find-no-gs1-unit = { $code }: لا وحدة بهذا الـGTIN والرقم التسلسلي في نسخة هذا الجهاز
find-not-in-copy = { $code }: غير موجود في نسخة هذا الجهاز
find-place = { $bin } · المنطقة { $zone } · { $location }
find-no-bin-lower = بلا موقع
find-bin = الموقع { $bin }
find-no-bin = بلا موقع
find-state = الحالة
find-where = المكان
find-sku = الصنف
find-epc = EPC
find-serial = الرقم التسلسلي
find-gtin = GTIN
find-gs1-serial = الرقم التسلسلي GS1
find-lot = الدفعة
find-expiry = تاريخ الانتهاء
find-result = { $epc }: { $state }، { $bin }

## الأسئلة

setup-switch-title = التبديل إلى { $device } في { $site }؟
setup-switch-text = يحتفظ هذا الجهاز بعمليات مسح لم تُسوَّ بعد من { $device } في { $site }، عددها { $count }. تبقى على الجهاز في كل الأحوال (تعرضها قائمة الانتظار)، لكنها تُرسل من الآن بالإعداد الجديد. دعها تُرسل أولًا ما لم يقل المشرف غير ذلك.
setup-switch-yes = تبديل
setup-switch-no = البقاء على { $device }
setup-switch-how = اضغط «{ $no }» أو امسح CONFIRM للتبديل.
count-close-title = إغلاق الجرد { $count }؟
count-close-text = يغلق هذا الجرد للمنطقة { $zone } بأكملها؛ ثم يحسب المستودع الفروقات.
count-close-text-figures = يغلق هذا الجرد للمنطقة { $zone } بأكملها؛ ثم يحسب المستودع الفروقات. المفقود { $missing }، غير المتوقع { $unexpected } (أرقام المستودع عمرها { $age }، مع عمليات مسح هذا الجهاز منذ ذلك الحين).
count-close-yes = إغلاق الجرد
count-close-no = متابعة العد
count-close-how = اضغط «{ $no }» أو امسح CONFIRM لإغلاق الجرد.

## ما هو الرمز حين لا يكون ما تطلبه الشاشة

sign-in-not-badge-kind = { $kind ->
    [tag] { $code } وسم، وليس بطاقة مشغّل
    [bin] { $code } ملصق موقع، وليس بطاقة مشغّل
    [grn] { $code } إذن استلام، وليس بطاقة مشغّل
    [count] { $code } مهمة جرد، وليست بطاقة مشغّل
   *[unit] { $code } هو الرقم التسلسلي للوحدة { $epc }، وليس بطاقة مشغّل
  }
put-other-kind = { $kind ->
    [grn] { $code } إذن استلام، وليس وحدة ولا ملصق موقع: لم يُسجَّل.
   *[count] { $code } مهمة جرد، وليست وحدة ولا ملصق موقع: لم تُسجَّل.
  }
put-neither = { $code } ليس وحدة ولا ملصق موقع يعرفه المستودع: لم يُسجَّل.
put-still = لا يزال الموقع { $bin }: امسح وحدة له، أو ملصق موقع آخر.
put-bin-then-units = امسح ملصق الموقع، ثم وحداته.
put-prompt-units = امسح الوحدات للموقع { $bin }
put-prompt-other-bin = أو ملصق موقع آخر
put-prompt-wait = مسح الوحدات ينتظره
prompt-bin = امسح ملصق موقع
bin-need = الموقع { $bin }
bin-need-none = ملصق الموقع
bin-first = امسح ملصق موقع أولًا: لم يُسجَّل { $code }.
mode-put_away = التخزين
mode-put_away-blurb = امسح ملصق موقع، ثم وحداته.

## ملصقات GS1

label-refused = لم يُسجَّل: { $why }.
label-refused-next = لم يُستخدم شيء منه. امسحه مرة أخرى؛ الملصق المرفوض مرتين مطبوع بشكل خاطئ: ضع الصنف جانبًا لملصق جديد.
label-sscc = SSCC { $value }
label-gtin = GTIN { $value }
label-serial = تسلسلي { $value }
label-lot = دفعة { $value }
label-expiry = انتهاء { $value }
label-what = { $text } ({ $keys })
label-no-unit = { $what }: لا توجد وحدة بهذا الـGTIN والرقم التسلسلي، لا في نسخة هذا الجهاز ولا في المستودع: لم يُسجَّل.
label-no-unit-next = امسح وسم الوحدة بدلًا من ذلك، أو اطلب من المشرف استيراد الـGTIN والرقم التسلسلي.
label-pallet = { $what } ملصق منصّة: { $mode } يأخذ ملصق وحدة، لم يُسجَّل.
label-sku-lot = { $what } يحدد صنفًا ودفعة، وليس وحدة واحدة: لم يُسجَّل.
label-sku-lot-next = { $prompt }: الملصق أو الوسم الخاص بالوحدة نفسها.
label-nothing = { $what } لا يحدد وحدة ولا منصّة ولا دفعة: لم يُسجَّل.

## الجرد

mode-cycle_count = الجرد الدوري
mode-cycle_count-blurb = عُدّ منطقة موقعًا بعد موقع.
count-need = الجرد { $count }
count-need-none = مهمة جرد
count-prompt-choose = امسح مهمة جرد أو اضغط عليها
count-prompt-tags = امسح الوسوم في الموقع { $bin }
count-prompt-next-bin = أو ملصق الموقع التالي
count-prompt-zone = المنطقة { $zone }
count-none-open = لا توجد مهمة جرد مفتوحة في نسخة هذا الجهاز: امسح واحدة.
count-choice = { $location } · المنطقة { $zone }
count-unknown = ليست مهمة جرد يعرفها هذا الجهاز: { $count }
offline-scan-again = غير متصل: امسحه مرة أخرى عندما يستجيب المستودع.
count-check-sheet = تحقق من ورقة العد.
count-not-open = مهمة الجرد { $count } حالتها { $state }: لا تقبل عمليات مسح
count-tap-open = اضغط على مهمة جرد مفتوحة.
count-chosen = الجرد { $count } · المنطقة { $zone }
count-epcs-more = { $epcs } و{ $more } غيرها
count-seen = المعدود
count-expected = / المتوقع
count-missing = المفقود
count-unexpected = · غير المتوقع
count-missing-list = المفقود: { $epcs }
count-unexpected-list = غير المتوقع: { $epcs }
count-age = المنطقة { $zone } في { $location }. أرقام المستودع عمرها { $age }؛ الوسوم من هذا الجهاز منذ ذلك الحين ‎+{ $since }، منها { $waiting } بانتظار الإرسال.
count-age-unread = المنطقة { $zone } في { $location }. أرقام المستودع: لم تُقرأ بعد (غير متصل)؛ الوسوم من هذا الجهاز منذ ذلك الحين ‎+{ $since }، منها { $waiting } بانتظار الإرسال.
count-age-bin = المنطقة { $zone } في { $location }، الموقع { $bin } فقط. أرقام المستودع عمرها { $age }؛ الوسوم من هذا الجهاز منذ ذلك الحين ‎+{ $since }، منها { $waiting } بانتظار الإرسال.
count-age-bin-unread = المنطقة { $zone } في { $location }، الموقع { $bin } فقط. أرقام المستودع: لم تُقرأ بعد (غير متصل)؛ الوسوم من هذا الجهاز منذ ذلك الحين ‎+{ $since }، منها { $waiting } بانتظار الإرسال.
count-bin-only = هذا الجرد للموقع { $bin } فقط: لا يُعد { $code }
count-scan-tags-in = امسح الوسوم في الموقع { $bin }.
count-other-zone = الموقع { $bin } في المنطقة { $zone }، وليس في منطقة هذا الجرد { $count_zone }
count-scan-zone-bin = امسح موقعًا من منطقة هذا الجرد.
count-bin-then-tags = امسح ملصق الموقع، ثم وسومه.
count-not-tag = { $code }: ليس وسمًا ولا ملصق موقع
count-tag-or-bin = امسح وسمًا أو ملصق موقع.

## التحقق من الشحن

mode-dispatch_verify = التحقق من الشحن
mode-dispatch_verify-blurb = طابق الوسوم مع بيان الشحن المباشر.
dispatch-offline = غير متصل: يقرأ التحقق من الشحن بيان الشحن مباشرة ولا يمكن فتحه حتى يستجيب المستودع. أعد الاتصال وامسح بيان الشحن مرة أخرى.
dispatch-offline-resume = غير متصل: يُقرأ بيان الشحن مباشرة؛ امسحه مرة أخرى عندما يستجيب المستودع.
dispatch-need = بيان الشحن { $manifest }
dispatch-need-none = بيان الشحن (مباشر)
dispatch-prompt = امسح بيان الشحن
dispatch-prompt-small = يُقرأ مباشرة من المستودع
dispatch-prompt-tags = امسح الوسوم لـ { $manifest }
dispatch-prompt-tags-small = الوسم غير المدرج يوقف الرصيف
dispatch-no-answer = لم يُفتح التحقق من الشحن: المستودع لا يستجيب ({ $manifest })
dispatch-no-manifest = لا يوجد بيان شحن { $manifest } في المستودع
dispatch-answered = بيان الشحن { $manifest }: أجاب المستودع { $status }
dispatch-not-ready = بيان الشحن { $manifest } حالته { $state }: غير جاهز للشحن
dispatch-close-first = أغلق هذه الجلسة للتحقق من بيان شحن غير { $manifest }
dispatch-read-again = أُعيدت قراءة بيان الشحن { $manifest }
dispatch-opened = بيان الشحن { $manifest }: الوحدات { $units }
tick-verified = تم التحقق
tick-waiting = تم التحقق هنا، بانتظار الإرسال
tick-undo-waiting = أُلغي هنا، بانتظار الإرسال
tick-not-verified = لم يتم التحقق
dispatch-verified = تم التحقق
dispatch-waiting-here = (في الانتظار هنا: { $count })
dispatch-age = قُرئ بيان شحن المستودع قبل { $age }، مع إجاباته منذ ذلك الحين؛ عمليات مسح هذا الجهاز بانتظار الإرسال: { $waiting }.
dispatch-units =
    .aria-label = الوحدات في بيان الشحن
dispatch-unit = { $epc }: { $tick }
dispatch-unit-pallet = { $epc } على المنصّة { $sscc }: { $tick }
dispatch-pallet = · المنصّة { $sscc }
dispatch-manifest-first = امسح بيان الشحن أولًا: لم يُسجَّل { $code }.
dispatch-manifest-first-next = امسح بيان الشحن، ثم منصّاته ووسومه.
dispatch-pallet-shown = { $code } (منصّة، الوحدات: { $units })
dispatch-not-on = غير مدرج في بيان الشحن
dispatch-pallet-not-on = المنصّة { $sscc } غير مدرجة في { $manifest }. أنزلها عن الرصيف، ثم أكّد.
dispatch-not-tag = { $code }: ليس وسمًا
dispatch-tag-not-on = { $epc } غير مدرج في { $manifest }. أنزله عن الرصيف، ثم أكّد.

## الاستلام

mode-receive = الاستلام
mode-receive-blurb = عُدّ الوسوم مقابل إذن استلام.
receive-grn = إذن الاستلام { $grn }
receive-need-none = إذن الاستلام
receive-prompt = امسح إذن استلام أو اضغط عليه
receive-prompt-small = يحتاج الاستلام إلى إذن استلام قبلته مراقبة الجودة
receive-prompt-tags = امسح الوسوم لـ { $grn }
receive-prompt-sku = الوسوم الجديدة للصنف { $sku }
receive-prompt-sku-lot = الوسوم الجديدة للصنف { $sku } { $keys }
receive-prompt-sku-first = الوسم الذي لا يعرفه المستودع يحتاج ملصق صنفه أولًا
receive-none-waiting = لا يوجد إذن استلام منتظر في نسخة هذا الجهاز: امسح واحدًا.
receive-choice = البنود: { $lines } · { $state }
receive-qc = الجودة { $qc }
receive-encode-on = ترميز الوسوم: تشغيل
receive-encode-off = ترميز الوسوم: إيقاف
receive-no-sku = لم يُمسح ملصق صنف
receive-sku = الصنف { $sku }
receive-sku-lot = الصنف { $sku } · { $lot }
receive-last-label = آخر ملصق: { $epc } · { $lot }
receive-last-label-sku = آخر ملصق: { $epc } · الصنف { $sku } · { $lot }
receive-grn-not-cached = إذن الاستلام هذا غير موجود في نسخة الجهاز بعد.
receive-expected = المتوقع
receive-received = المستلم
receive-queued-here = في الانتظار هنا
receive-age = المستلم كما ذكر المستودع قبل { $age }، مع إجاباته منذ ذلك الحين؛ في الانتظار هنا: عمليات مسح هذا الجهاز بانتظار الإرسال.
receive-age-never = المستلم كما ذكر المستودع (لم يُقرأ قط)، مع إجاباته منذ ذلك الحين؛ في الانتظار هنا: عمليات مسح هذا الجهاز بانتظار الإرسال.
receive-unknown-grn = ليس إذن استلام يعرفه هذا الجهاز: { $grn }
receive-check-papers = تحقق من الرقم في مستندات التوريد.
receive-qc-not-accepted = إذن الاستلام { $grn }: الجودة { $qc }؛ يحتاج الاستلام إلى القبول
receive-ask-qc = اسأل مراقبة الجودة؛ واستلم إذنًا آخر في الأثناء.
receive-lot = الدفعة { $lot } · الانتهاء { $expiry }
receive-not-grn = { $code } ليس إذن استلام: لم يُسجَّل.
receive-grn-first = امسح إذن استلام أو اضغط عليه أولًا.
receive-gtin-no-sku = الـGTIN { $gtin } لا يحدد أي صنف في نسخة هذا الجهاز: لم يُسجَّل.
receive-gtin-no-sku-next = امسح ملصق الصنف نفسه، أو اطلب من المشرف استيراد الـGTIN الخاص بالصنف.
receive-sku-not-on = الصنف { $sku } (GTIN { $gtin }) غير مدرج في { $grn }: لم يُسجَّل.
receive-check-delivery = طابق التوريد مع إذن الاستلام.
receive-not-tag = { $code }: ليس وسمًا ولا صنفًا من { $grn }
receive-tag-gtin-no-sku = { $epc }: الـGTIN { $gtin } لا يحدد أي صنف في نسخة هذا الجهاز؛ امسح ملصق صنفه أولًا
receive-tag-unknown = { $epc }: لا يعرف المستودع هذا الوسم؛ امسح ملصق صنفه أولًا

## ما تعنيه إجابات المستودع: كل سبب رفض وكل رمز يحجب عملية مسح،
## مع الخطوة التالية (.next).

reason-stale_state = تغيّرت الوحدة في المستودع بعد آخر قراءة لها على هذا الجهاز.
    .next = أعد مسحها (يقرأ الجهاز الوحدة من جديد أولًا)، أو أكّد.
reason-session_not_open = لم تُفتح جلسة هذا المسح في المستودع قط.
    .next = انظر إلى أول عنصر في الجلسة (سبب رفضه)، ثم ابدأ جلسة جديدة.
reason-session_already_opened = كانت هذه الجلسة مفتوحة من قبل.
    .next = لا شيء مطلوب؛ أكّد.
reason-session_already_closed = كانت هذه الجلسة مغلقة من قبل.
    .next = لا شيء مطلوب؛ أكّد.
reason-session_closed = أغلق المشرف هذه الجلسة في المستودع قبل إجراء هذا المسح.
    .next = امسح بطاقتك لبدء جلسة جديدة، ثم امسحه مرة أخرى.
reason-undo_window_expired = جاء الإلغاء بعد أكثر من دقيقتين من المسح.
    .next = اطلب من المشرف تصحيحه (إنه على قائمته).
reason-unknown_target = لم يتلقَّ المستودع قط المسح الذي يشير إليه هذا الإلغاء.
    .next = أكّد؛ وتحقق من المسح نفسه في قائمة الانتظار.
reason-cannot_undo_an_undo = لا يمكن إلغاء عملية إلغاء.
    .next = امسح الصنف مرة أخرى إذا كان يجب أن يبقى.
reason-target_rejected = رُفض المسح، فلا شيء لإلغائه.
    .next = أكّد.
reason-target_not_undoable = لم يغيّر ذلك المسح شيئًا يمكن إلغاؤه.
    .next = أكّد؛ واسأل المشرف إذا كان يجب تغيير شيء.
reason-target_not_applied = لم يُطبَّق المسح بعد.
    .next = انتظر حتى يُطبَّق، ثم ألغِه مرة أخرى.
reason-target_not_rejected = لم يُرفض ذلك العنصر، فلا شيء لتأكيده.
    .next = لا شيء مطلوب.
reason-unknown_operator = هذه البطاقة ليست في قائمة مشغّلي المستودع.
    .next = امسح بطاقتك أنت، أو اطلب من المشرف إضافتك.
reason-mode_not_allowed = لا يستطيع هذا الجهاز فعل ذلك (ملفه التعريفي).
    .next = استخدم جهازًا يستطيع؛ واسأل المشرف عن هذا الجهاز.
reason-read_only_mode = البحث عن وحدة لا يغيّر شيئًا في المستودع أبدًا.
    .next = لا شيء مطلوب؛ أكّد.
reason-unknown_bin = لا يوجد في المستودع موقع بهذا الملصق.
    .next = امسح ملصق الموقع مرة أخرى، أو اطلب من المشرف إضافة الموقع.
reason-unknown_unit = لا يعرف المستودع هذا الوسم أو الرقم التسلسلي.
    .next = ضع الوحدة جانبًا وأبلغ المشرف.
reason-unit_state = لا يمكن تخزين هذه الوحدة: إنها مشحونة أو مفقودة.
    .next = ضعها جانبًا وأبلغ المشرف.
reason-grn_not_accepted = إذن الاستلام هذا غير معروف، أو لم تقبله مراقبة الجودة.
    .next = تحقق من رقم إذن الاستلام؛ واسأل مراقبة الجودة أو المشرف.
reason-not_on_grn = صنف هذه الوحدة غير مدرج في إذن الاستلام.
    .next = ضعها جانبًا؛ وأبلغ المشرف (إذن استلام خاطئ أو توريد خاطئ).
reason-excess_line = بند إذن الاستلام فيه كل الوحدات المتوقعة بالفعل.
    .next = ضع الوحدة الزائدة جانبًا وأبلغ المشرف.
reason-already_received = استُلمت هذه الوحدة من قبل.
    .next = ضعها جانبًا؛ قد يكون الوسم مكررًا.
reason-count_not_open = مهمة الجرد مغلقة أو معتمدة أو ملغاة.
    .next = اختر مهمة جرد مفتوحة، أو اطلب من المشرف فتح واحدة.
reason-manifest_not_ready = بيان الشحن غير معروف، أو ليس قيد التجهيز ولا مشحونًا.
    .next = تحقق من رقم بيان الشحن؛ واسأل المشرف.
reason-not_on_manifest = هذه الوحدة غير مدرجة في بيان الشحن.
    .next = لا تحمّلها على الشاحنة وأبلغ المشرف.
reason-INVALID_ITEM = ينقص المسحَ شيءٌ يحتاجه المستودع، أو يشير إلى إذن استلام أو جرد أو بيان شحن لجلسة أخرى.
    .next = تجاهله وامسح مرة أخرى؛ وأبلغ المشرف إذا تكرر.
reason-SESSION_CONFLICT = لهذا الجهاز أو المشغّل جلسة أخرى مفتوحة في المستودع.
    .next = سجّل الخروج على الجهاز الآخر؛ وإن فُقد أو أُعيد ضبطه، فاطلب من المشرف إغلاق جلسته من واجهة المستودع (الأجهزة، إغلاق الجلسة). ثم تجاهل هذا وابدأ من جديد.
reason-SESSION_NOT_YOURS = الجلسة تخص جهازًا آخر.
    .next = تجاهله وابدأ جلسة جديدة.
reason-SEQ_ALREADY_USED = لدى المستودع عنصر آخر في هذا الموضع من الجلسة.
    .next = تجاهله؛ وامسح مرة أخرى إذا كان يجب أن يبقى.
reason-IDEMPOTENCY_KEY_REUSED = لدى المستودع عنصر مختلف بالمفتاح نفسه.
    .next = تجاهله وامسح مرة أخرى.
reason-IDEMPOTENCY_RECEIPT_UNAVAILABLE = لا يستطيع المستودع قراءة إجابته عن هذا العنصر.
    .next = أبلغ المشرف؛ ولا تمسحه مرة أخرى حتى يقول.
reason-ALREADY_UNDONE = أُلغي المسح من قبل.
    .next = تجاهله.
reason-UNIT_CONFLICT = الوسم أو الرقم التسلسلي يخص وحدة أخرى في المستودع.
    .next = ضع الوحدة جانبًا وأبلغ المشرف.
reason-CONSTRAINT_CONFLICT = رفضه المستودع لتعارضه مع ما لديه.
    .next = تجاهله؛ وأبلغ المشرف إذا تكرر.
reason-http = رفض المستودع هذا المسح كما أُرسل.
    .next = تجاهله وامسح مرة أخرى؛ وأبلغ المشرف إذا تكرر.
reason-waiting-behind = ينتظر خلف مسح محجوب في جلسته.
    .next = قرّر بشأن المسح المحجوب في قائمة الانتظار.
reason-other = رفض المستودع هذا المسح.
    .next = اعرضه على المشرف.

## ما آل إليه كل مسح

outcome-pending = جارٍ الحفظ…
outcome-kept = محفوظ على هذا الجهاز
outcome-applied = مُطبّق
outcome-training = سُجّل كتدريب: لم يُنقل شيء
outcome-refused = مرفوض
outcome-blocked = محجوب: قرّر في قائمة الانتظار
outcome-voided = تم تجاهله
outcome-failed = لم يُسجَّل
outcome-undone = أُلغي
outcome-held = محفوظ على هذا الجهاز، لم يُرسل: هذا الجهاز غير مسموح به في المستودع
outcome-refused-seq = مرفوض رقم { $seq }: { $words }
undo = إلغاء
results-fewer = اعرض الأخيرة فقط
results-more = { $count ->
    [zero] لا عمليات مسح سابقة
    [one] اعرض مسحًا سابقًا واحدًا
    [two] اعرض مسحين سابقين
    [few] اعرض { $count } عمليات مسح سابقة
    [many] اعرض { $count } عملية مسح سابقة
   *[other] اعرض { $count } عملية مسح سابقة
  }
late-refused = { $count ->
    [zero] لم يرفض المستودع أي مسح بعد حفظه هنا.
    [one] رفض المستودع مسحًا واحدًا بعد حفظه هنا.
    [two] رفض المستودع مسحين بعد حفظهما هنا.
    [few] رفض المستودع { $count } عمليات مسح بعد حفظها هنا.
    [many] رفض المستودع { $count } عملية مسح بعد حفظها هنا.
   *[other] رفض المستودع { $count } عملية مسح بعد حفظها هنا.
  }
reason-words-next = { $words } { $next }
capture-not-open = الجلسة لم تُفتح بعد.
capture-to-bin = { $code } إلى { $bin }
capture-row = رقم { $seq } { $code }
capture-row-note = رقم { $seq } { $code } · { $note }
capture-kept = محفوظ على هذا الجهاز رقم { $seq }: { $code }
capture-kept-held = محفوظ على هذا الجهاز رقم { $seq }: { $code }، لم يُرسل: هذا الجهاز غير مسموح به في المستودع
capture-failed-row = { $code }: لم يُسجَّل ({ $error })
capture-failed = لم يُسجَّل { $code }: { $error }
undo-no-session = لا توجد جلسة مفتوحة لتسجيل الإلغاء فيها
undo-row = رقم { $seq } إلغاء { $code }
undo-done = أُلغي: { $code } (محفوظ على هذا الجهاز؛ يطبّقه المستودع)
undo-failed = فشل الإلغاء: { $error }
undo-nothing = لا شيء لإلغائه: يعمل الإلغاء على آخر مسح في هذه الجلسة خلال { $seconds } ث.
rescan-no-epc = العنصر لا يذكر رقم EPC
rescan-no-session = افتح جلسة { $mode } لإعادة المسح
rescan-row = رقم { $seq } أُعيد مسح { $epc }

## صفوف قائمة الانتظار

queue-open = فتح { $mode } { $context } · { $operator }
queue-undo = إلغاء { $target }
command-open_session = فتح جلسة
command-scan = مسح
command-undo = تراجع
command-void = إبطال
command-close_session = إغلاق الجلسة
command-acknowledge = إقرار
queue-age = سُجّل قبل { $age }
queue-discard = تجاهل
queue-rescan = إعادة المسح
queue-state = { $state ->
    [queued] في الانتظار
    [sending] جارٍ الإرسال
    [done] تم
    [rejected] مرفوض
    [blocked] محجوب
    [voided] تم تجاهله
    [training] تدريب
   *[other] { $state }
  }
queue-acknowledged = { $words } (تم التأكيد)
queue-more-count = المزيد (يتبقى { $count })
queue-filter-decide-count = بانتظار قرار ({ $count })
queue-nothing-to-decide = لا شيء ينتظر قرارًا.
queue-empty = قائمة الانتظار فارغة.
queue-counts = في الانتظار { $queued } · جارٍ الإرسال { $sending } · تم { $done } · مرفوض { $rejected } · محجوب { $blocked } · متجاهَل { $voided }
queue-nothing-waiting = لا شيء في الانتظار.
queue-oldest = الأقدم في الانتظار: { $age }
queue-sending-now = جارٍ الإرسال الآن.
queue-next-try = المحاولة التالية في { DATETIME($at, hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23") } (بعد { $in })، أو فور استجابة المستودع من جديد.
queue-action-done = { $action }: تم ({ $label })
queue-action-failed = { $label }: { $error }
queue-sent = أُرسل { $items } في { $requests } طلب
queue-export = تصدير
queue-export-save = حفظ الملف
queue-export-share = مشاركة
queue-export-writing = جارٍ كتابة الملف…
queue-export-failed = فشل التصدير: { $error }
queue-export-share-failed = فشلت المشاركة: { $error }
queue-export-nothing = لا شيء للتصدير: كل عمليات المسح على هذا الجهاز وصلت إلى المستودع.
queue-export-done = { $items ->
    [zero] لا عناصر
    [one] عنصر واحد
    [two] عنصران
    [few] { $items } عناصر
    [many] { $items } عنصرًا
   *[other] { $items } عنصر
  } في { $name } ({ $size }). تبقى في قائمة الانتظار هنا وتصل إلى المستودع إن استجاب من جديد.

## إعداد الجهاز: ما وجده الفحص

setup-not-url = { $url } ليس عنوان URL: يبدأ بـ https:// ويذكر مضيف المستودع ومنفذه.
setup-not-web = { $url } ليس عنوان ويب: يبدأ بـ https://.
setup-mixed = { $url } عنوان http غير مشفّر: هذه الصفحة https ولا يمكنها الوصول إليه. استخدم عنوان https:// الخاص بالمستودع.
setup-port-hint = منفذ HTTPS للمستودع هو { $port } ما لم يُضبط غير ذلك: جرّب https://{ $host }:{ $port }.
setup-plain-port = المنفذ { $port } على { $host } يجيب بـ HTTP غير مشفّر، لا HTTPS: إنه المنفذ غير المشفّر للمستودع. استخدم عنوان HTTPS الخاص بالمستودع (https://{ $host }:{ $https } ما لم يُضبط غير ذلك).
setup-certificate = هذا الجهاز لا يثق بشهادة { $origin }، أو أن المنفذ { $port } ليس منفذ HTTPS للمستودع. إذا كان المنفذ صحيحًا، فثبّت شهادة المستودع مرة واحدة: افتح { $trust } (أو اطلب من قسم تقنية المعلومات توزيعها)، ثم احفظ مرة أخرى.
setup-unreachable = المستودع لا يستجيب على { $origin }: لم يقبل أحد الاتصال على المنفذ { $port }. تحقق من العنوان والمنفذ، ومن أن المستودع يعمل، وأن هذا الجهاز على شبكته.
setup-cross-origin = { $origin } يستجيب، لكن هذه الصفحة (من { $page }) لا يمكنها قراءته: افتح رابط الإعداد على المستودع نفسه.
setup-token = رفض المستودع رمز الجهاز (401): إنه مكتوب بشكل خاطئ، أو أن الجهاز { $device } أُلغي أو مُنح رمزًا جديدًا منذ ذلك الحين. اطلب من المشرف رابط إعداد جديدًا ({ $command }) وافتحه.
setup-site-status = أجاب المستودع { $status } على فحص الرمز.
setup-other-device = هذا الرمز للجهاز { $named }، وليس لـ { $device }: استخدم المعرّف الذي طبعه المستودع معه.
setup-checking = جارٍ فحص { $url }…
setup-not-switched = لم يتم التبديل: يبقى هذا الجهاز { $device } ← { $site }.
setup-done = تم الإعداد باسم { $device } ← { $site }
setup-done-but = تم الإعداد باسم { $device } ← { $site }. { $why }
setup-not-yet = لم يُعدّ بعد: تُحفظ عمليات المسح على هذا الجهاز حتى يُعدّ.

## إصدار جديد من التطبيق

release-schema-newer = توقّف التسجيل: يحتفظ هذا الجهاز بعمليات مسح من إصدار أحدث مما يقدمه المستودع الآن. لا يضيع شيء من قائمة الانتظار. اطلب من المستودع تقديم الإصدار الأحدث مجددًا.
release-stopped = توقّف التسجيل: لم يبدأ التطبيق ({ $code }: { $message }). لا يضيع شيء من قائمة الانتظار.
release-ready = التحديث جاهز: الإصدار { $build }. أعد التحميل بين عمليتي مسح.
release-failed = لم يُثبَّت التحديث { $build } ({ $code })؛ يبقى هذا الجهاز على الإصدار { $running }.
release-updating = جارٍ تحديث التطبيق بين عمليات المسح…

## الملصقات المطبوعة والمرمّزة على طابعة المحطة

printer-paper-out = نفد الورق
printer-head-open = رأس الطباعة مفتوح
printer-ribbon-out = نفد شريط الحبر
printer-paused = متوقفة مؤقتًا
printer-offline = الطابعة { $printer } غير متصلة
printer-unreached = لم يتمكن المستودع من الوصول إلى الطابعة { $printer } في آخر زيارة
printer-faults = الطابعة { $printer }: { $faults }
label-waiting = الملصق: يُطلب من طابعة المحطة عندما يتلقى المستودع هذا المسح
label-waits = الملصق ينتظر: { $trouble }. يُطبع مرة واحدة عند عودة الطابعة؛ لا ENCODE حتى يُقرأ الوسم للتحقق.
label-queued = الملصق في الانتظار على { $printer }.
label-printing = جارٍ الطباعة والترميز على { $printer }…
label-printed = كُتب الوسم وقُرئ للتحقق على { $printer }: سُجّل ENCODE.
label-void = وسم تالف على { $printer }: لم يُقرأ شيء للتحقق، فلا ENCODE. ضع الملصق جانبًا: يقرّر المشرف من واجهة المستودع (إعادة الطباعة أو الاستبعاد).
label-read-wrong = قُرئ الوسم بشكل خاطئ على { $printer }: كُتب { $wrote }، وقُرئ { $read }؛ لا ENCODE. ضع الملصق جانبًا: يقرّر المشرف من واجهة المستودع (إعادة الطباعة أو الاستبعاد).
label-read-other = قُرئ الوسم بشكل خاطئ على { $printer }: كُتب { $wrote }، وقُرئ شيء آخر؛ لا ENCODE. ضع الملصق جانبًا: يقرّر المشرف من واجهة المستودع (إعادة الطباعة أو الاستبعاد).
label-in-doubt = لم تُجب { $printer } بشأن هذا الملصق: ربما طُبع، ولم يُسجّل ENCODE. يقرّر المشرف من واجهة المستودع (إعادة الطباعة أو الاستبعاد).
label-dismissed = استُبعد الملصق من واجهة المستودع: لم يُسجّل ENCODE.
label-state = الملصق على { $printer }: { $state }.
station-unread = طابعة المحطة: لم تُقرأ بعد (لم يستجب المستودع).
station-none = لا توجد طابعة مضبوطة لهذه المحطة: هذا الجهاز يكتب الوسوم بنفسه.
station-trouble = تُطبع الملصقات وتُرمّز على { $printer }، لكن { $trouble }: تنتظر الملصقات هناك وتُطبع عند عودتها.
station-ready = تُطبع الملصقات وتُرمّز على { $printer }: يُقرأ كل وسم للتحقق قبل تسجيل ENCODE الخاص به.

## قيم سجل المخزون كما تعرضها الشاشات

unit-state-new = جديدة
unit-state-in_stock = في المخزون
unit-state-dispatched = تم الشحن
unit-state-missing = مفقودة

grn-state-open = مفتوح
grn-state-needs_resolution = بحاجة إلى معالجة
grn-state-complete = مكتمل

grn-qc-accepted = مقبولة
grn-qc-held = محجوزة
grn-qc-rejected = مرفوضة

manifest-state-draft = مسودة
manifest-state-packing = قيد التعبئة
manifest-state-dispatched = تم الشحن
manifest-state-verified = تم التحقق

count-state-open = مفتوحة
count-state-closed = مغلقة
count-state-approved = معتمدة
count-state-cancelled = ملغاة
